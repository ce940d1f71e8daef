// Each /v1/webhooks operation of /openapi.json and the method that calls it in the
// Python and R clients: named as the typed client names it (clients/typescript/src/webhooks.ts),
// in snake case. The client tests check both sides, so a new operation fails them.
export const WEBHOOK_METHODS: Record<string, string> = {
  createWebhook: 'create',
  listWebhooks: 'list',
  getWebhook: 'get',
  updateWebhook: 'update',
  deleteWebhook: 'delete',
  testWebhook: 'test',
  rotateWebhookSecret: 'rotate_secret',
  listWebhookDeliveries: 'deliveries',
  redeliverWebhookMessage: 'redeliver',
};
