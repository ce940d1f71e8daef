// The Explore page's one HTML document: a shell the script fills in. No inline script
// or style (the CSP forbids both); the key input is in the script's markup. The empty
// data: icon keeps the browser from asking for /favicon.ico, which this server has not.

export function explorePage(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Explore · Data Query Service</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/explore/assets/${style}">
<script type="module" src="/explore/assets/${script}"></script>
</head>
<body>
<noscript>The Explore page needs JavaScript. Every view it shows is a request to the /v1 API, which any client can send.</noscript>
</body>
</html>
`;
}
