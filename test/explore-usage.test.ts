import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { type ExploreSession, exploreSession, seriousViolations } from './helpers/explore-browser.ts';
import { skippedSuite } from './helpers/skip.ts';

// The key's usage on the Explore page, in Chromium against a real server: shown after
// the first answer, refreshed after answers with at most one /v1/usage per answer, and
// costing the key nothing.

if (CHROMIUM_MISSING) {
  skippedSuite('Explore usage panel', CHROMIUM_MISSING);
} else {
  const test = suite('Explore usage panel');
  let session: ExploreSession;
  test.before(async () => {
    session = await exploreSession();
  });
  test.after(async () => {
    await session?.close();
  });

  test('shows what is left of the minute, the day, exports and heavy seconds; refreshed after answers, one request per answer at most, counted against nothing', async () => {
    const { page, service } = session;
    const panel = page.getByRole('region', { name: 'Your usage' });
    const minuteLeft = async () =>
      Number((await panel.locator('dt:has-text("Requests this minute") + dd').innerText()).split(' of ')[0]!.replaceAll(',', ''));
    await panel.locator('dd').first().waitFor();
    for (const label of ['Requests this minute', 'Requests today (UTC)', 'Exports today', 'Heavy seconds this minute'])
      assert.is(await panel.getByText(label, { exact: true }).count(), 1, label);
    assert.is(await panel.locator('dt:has-text("Exports today") + dd').innerText(), '50 of 50 left');

    const usage: string[] = [];
    const answers: string[] = [];
    page.on('requestfinished', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === '/v1/usage') usage.push(path);
      else if (path.startsWith('/v1/')) answers.push(path);
    });
    const before = await minuteLeft();
    await page.getByRole('link', { name: 'Aggregate ggr' }).click();
    await page.locator('#view table.answer').waitFor({ timeout: 60_000 });
    // Once the answers are in and the panel has caught up with them: the page's data requests are what it spent.
    let shown = before;
    for (let i = 0; i < 250 && shown !== before - answers.length; i++) {
      await page.waitForTimeout(20);
      shown = await minuteLeft();
    }
    assert.ok(answers.length >= 1);
    assert.is(shown, before - answers.length, `${answers.length} data requests: ${answers.join(', ')}`);
    assert.ok(usage.length >= 1 && usage.length <= answers.length, `${usage.length} usage requests for ${answers.length} answers`);
    // The server agrees: the usage requests counted against nothing.
    const { limits } = (await service.get('/v1/usage')).json;
    assert.is(limits.minute.remaining, shown);
    assert.equal(await seriousViolations(page), []);
  });

  test('forgetting the key hides it', async () => {
    const { page } = session;
    await page.getByRole('button', { name: 'Forget key' }).click();
    assert.is(await page.getByRole('region', { name: 'Your usage' }).count(), 0);
  });

  test.run();
}
