import request from 'supertest';
import { SupplyChainDirectory } from '../../../src/modules/supply-chain/services/supply-chain-directory.service.js';
import { SyncLogService } from '../../../src/modules/supply-chain/services/sync-log.service.js';
import { SyncRequestService } from '../../../src/modules/supply-chain/services/sync-requests.service.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addMember,
  API,
  bearer,
  createOrganization,
  registerUser,
  type TestOrganization,
  type TestUser,
} from '../tenancy/tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';

/**
 * Supply-chain resources across three organizations: S (supplier), B (buyer) and C (a stranger that becomes a
 * buyer through a share link). One app boot; the steps build on each other in order.
 */
describe('supply chain: resources', () => {
  let t: TestApp;
  let S: TestOrganization;
  let B: TestOrganization;
  let C: TestOrganization;
  let sOwner: TestUser;
  let sMember: TestUser;
  let sGuest: TestUser;
  let bOwner: TestUser;
  let bMember: TestUser;
  let bGuest: TestUser;
  let cOwner: TestUser;

  let catalogId: string;
  let publicConn: string;
  let whitelistConn: string;
  let approvalConn: string;
  let orderBookId: string;
  let cOrderBookId: string;
  let publicBinding: string;

  const http = (): ReturnType<typeof request> => request(t.http);
  const sc = (org: TestOrganization, path: string): string => `${API}/organizations/${org.id}${path}`;
  const text = (value: string): { text: string } => ({ text: value });

  beforeAll(async () => {
    t = await createTestApp();
    [sOwner, sMember, sGuest, bOwner, bMember, bGuest, cOwner] = await Promise.all(
      Array.from({ length: 7 }, () => registerUser(t.http)),
    );
    S = await createOrganization(t.http, sOwner, { name: 'Supplier Co' });
    B = await createOrganization(t.http, bOwner, { name: 'Buyer Co' });
    C = await createOrganization(t.http, cOwner, { name: 'Third Co' });
    await addMember(t.http, sOwner, S.id, sMember, 'member');
    await addMember(t.http, sOwner, S.id, sGuest, 'guest');
    await addMember(t.http, bOwner, B.id, bMember, 'member');
    await addMember(t.http, bOwner, B.id, bGuest, 'guest');
  });
  afterAll(async () => {
    await t.close();
  });

  it('catalogs: create, document API, catalog row routes, revisions, refusals', async () => {
    const created = await http()
      .post(sc(S, '/catalogs'))
      .set(bearer(sMember))
      .send({
        name: 'Spring catalog',
        catalogType: 'product',
        sharingEnabled: true,
        fields: [
          { name: 'SKU', type: 'text', required: true, description: 'Stock keeping unit' },
          { name: 'Unit Price', type: 'number' },
          {
            name: 'Colour',
            type: 'single_select',
            selectOptions: [{ label: 'Red', color: '#f00' }, { label: 'Blue' }],
          },
          { id: 'weight', name: 'Weight', type: 'number' },
        ],
      })
      .expect(201);
    const catalog = created.body.payload;
    catalogId = catalog.id;
    expect(catalog).toMatchObject({
      organizationId: S.id,
      workspaceId: null,
      docType: 'catalog',
      catalogType: 'product',
      sharingEnabled: true,
    });
    expect(catalog.fields.map((f: { id: string }) => f.id)).toEqual([
      'sku',
      'unit_price',
      'colour',
      'weight',
    ]);
    expect(catalog.fields[0]).toMatchObject({ required: true, description: 'Stock keeping unit' });
    expect(catalog.fields[2].selectOptions).toEqual([
      { id: 'red', label: 'Red', color: '#f00' },
      { id: 'blue', label: 'Blue' },
    ]);

    // Refusals: a guest may not create, a stranger is told the organization does not exist, bad input is VALIDATION_ERROR.
    expect(
      (
        await http()
          .post(sc(S, '/catalogs'))
          .set(bearer(sGuest))
          .send({ name: 'x', catalogType: 'product' })
          .expect(403)
      ).body.code,
    ).toBe('FORBIDDEN');
    expect(
      (
        await http()
          .post(sc(S, '/catalogs'))
          .set(bearer(cOwner))
          .send({ name: 'x', catalogType: 'product' })
          .expect(404)
      ).body.code,
    ).toBe('NOT_FOUND');
    const bad = await http()
      .post(sc(S, '/catalogs'))
      .set(bearer(sOwner))
      .send({ name: 'x', catalogType: 'product', fields: [{ name: 'a', type: 'nope' }] })
      .expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');

    // Through the document API, with the organization context, and from any workspace of the organization.
    const doc = await http()
      .get(`${API}/doc/catalog/${catalogId}?organizationId=${S.id}`)
      .set(bearer(sGuest))
      .expect(200);
    expect(doc.body.payload.metadata.fields).toHaveLength(4);
    await http()
      .get(`${API}/doc/catalog/${catalogId}/metadata?workspaceId=${S.defaultWorkspaceId}`)
      .set(bearer(sOwner))
      .expect(200);
    await http()
      .post(`${API}/doc/catalog/${catalogId}/data?organizationId=${S.id}`)
      .set(bearer(sMember))
      .send({ id: 'r0', values: [{ fieldId: 'sku', value: text('A-0') }] })
      .expect(201);
    expect(
      (
        await http()
          .get(`${API}/doc/catalog/${catalogId}?organizationId=${C.id}`)
          .set(bearer(cOwner))
          .expect(404)
      ).body.code,
    ).toBe('DOC_NOT_FOUND');
    expect(
      (
        await http()
          .get(`${API}/doc/catalog/${catalogId}?organizationId=${S.id}`)
          .set(bearer(cOwner))
          .expect(404)
      ).body.code,
    ).toBe('DOC_NOT_FOUND');

    // Catalog routes: fields, batch (one revision), row PATCH/DELETE, requestId, revisions since.
    const fields = await http()
      .get(sc(S, `/catalogs/${catalogId}/fields`))
      .set(bearer(sGuest))
      .expect(200);
    expect(fields.body.payload.items.map((f: { name: string }) => f.name)).toEqual([
      'SKU',
      'Unit Price',
      'Colour',
      'Weight',
    ]);
    const firstRevision = (
      await http()
        .get(sc(S, `/catalogs/${catalogId}/revisions`))
        .set(bearer(sGuest))
        .expect(200)
    ).body.payload.items[0];

    const batch = await http()
      .post(sc(S, `/catalogs/${catalogId}/rows/batch-update`))
      .set(bearer(sMember))
      .send({
        rows: [
          {
            target: { row: 'r1' },
            operation: 'create',
            values: [
              { fieldId: 'sku', value: text('A-1') },
              { fieldId: 'unit_price', value: { number: 10 } },
            ],
          },
          { id: 'r2', operation: 'create', values: { sku: text('A-2'), unit_price: { number: 20 } } },
          { target: { row: 'r0' }, values: [{ fieldId: 'unit_price', value: { number: 5 } }] },
        ],
      })
      .expect(200);
    expect(batch.body.payload).toMatchObject({
      merged: true,
      rowsCreated: 2,
      rowsUpdated: 1,
      rowIds: ['r1', 'r2', 'r0'],
    });
    expect(batch.body.payload.revisionId).toEqual(expect.any(String));
    // A batch is one bulk write: one data_bulk_operation event, never one event per row.
    const rowEvents = await t.dataSource.query(
      `SELECT event_type AS "eventType" FROM outbox
        WHERE doc_type = 'catalog' AND doc_id = $1 AND payload->>'requestId' = $2 AND event_type LIKE 'data_%'`,
      [catalogId, batch.body.payload.requestId],
    );
    expect(rowEvents.map((event: { eventType: string }) => event.eventType)).toEqual(['data_bulk_operation']);

    // A row named without an operation is written whether it exists or not (batch-update is the spec's only route
    // that adds catalog rows); `operation: update` of a missing row stays a 404.
    const upserted = await http()
      .post(sc(S, `/catalogs/${catalogId}/rows/batch-update`))
      .set(bearer(sMember))
      .send({
        rows: [
          { target: { row: 'u1' }, values: [{ fieldId: 'sku', value: text('U-1') }] },
          { id: 'u2', values: { sku: text('U-2') } },
          { target: { row: 'r1' }, values: [{ fieldId: 'unit_price', value: { number: 11 } }] },
        ],
      })
      .expect(200);
    expect(upserted.body.payload).toMatchObject({ merged: true, rowsCreated: 2, rowsUpdated: 1, rowIds: ['u1', 'u2', 'r1'] });
    await http()
      .post(sc(S, `/catalogs/${catalogId}/rows/batch-update`))
      .set(bearer(sMember))
      .send({ rows: [{ target: { row: 'missing' }, operation: 'update', values: [{ fieldId: 'sku', value: text('M') }] }] })
      .expect(404);
    await http()
      .post(sc(S, `/catalogs/${catalogId}/rows/batch-update`))
      .set(bearer(sMember))
      .send({ rows: [{ target: { row: 'u1' }, operation: 'delete' }, { target: { row: 'u2' }, operation: 'delete' }] })
      .expect(200);

    // All or nothing: one bad row leaves the others unwritten.
    const failed = await http()
      .post(sc(S, `/catalogs/${catalogId}/rows/batch-update`))
      .set(bearer(sMember))
      .send({
        rows: [
          { id: 'r3', operation: 'create', values: [{ fieldId: 'sku', value: text('A-3') }] },
          { target: { row: 'missing' }, values: [] },
        ],
      })
      .expect((res) => expect([400, 404]).toContain(res.status));
    expect(['VALIDATION_ERROR', 'NOT_FOUND']).toContain(failed.body.code);
    await http()
      .get(`${API}/doc/catalog/${catalogId}/data/r3?organizationId=${S.id}`)
      .set(bearer(sOwner))
      .expect(404);
    expect(
      (
        await http()
          .post(sc(S, `/catalogs/${catalogId}/rows/batch-update`))
          .set(bearer(sMember))
          .send({ rows: [] })
          .expect(400)
      ).body.code,
    ).toBe('VALIDATION_ERROR');

    const patched = await http()
      .patch(sc(S, `/catalogs/${catalogId}/rows/r1`))
      .set(bearer(sMember))
      .send({ values: [{ fieldId: 'unit_price', value: { number: 11 } }] })
      .expect(200);
    expect(patched.body.payload.values).toEqual(
      expect.arrayContaining([{ fieldId: 'unit_price', value: { number: 11 } }]),
    );
    const stale = await http()
      .patch(sc(S, `/catalogs/${catalogId}/rows/r1`))
      .set(bearer(sMember))
      .send({ values: [], version: 99 })
      .expect(409);
    expect(stale.body.code).toBe('VERSION_CONFLICT');
    await http()
      .patch(sc(S, `/catalogs/${catalogId}/rows/r1`))
      .set(bearer(sGuest))
      .send({ values: [] })
      .expect(403);

    const open = await http()
      .post(`${API}/doc/catalog/${catalogId}/requests?organizationId=${S.id}`)
      .set(bearer(sMember))
      .send({ title: 'draft' })
      .expect(201);
    await http()
      .delete(sc(S, `/catalogs/${catalogId}/rows/r2?requestId=${open.body.payload.id}`))
      .set(bearer(sMember))
      .expect(200);
    await http()
      .get(`${API}/doc/catalog/${catalogId}/data/r2?organizationId=${S.id}`)
      .set(bearer(sOwner))
      .expect(200);
    await http()
      .post(`${API}/doc/catalog/${catalogId}/requests/${open.body.payload.id}/merge?organizationId=${S.id}`)
      .set(bearer(sOwner))
      .expect(200);
    await http()
      .get(`${API}/doc/catalog/${catalogId}/data/r2?organizationId=${S.id}`)
      .set(bearer(sOwner))
      .expect(404);

    const since = await http()
      .get(sc(S, `/catalogs/${catalogId}/revisions?since=${firstRevision.id}`))
      .set(bearer(sGuest))
      .expect(200);
    const versions = since.body.payload.items.map((r: { version: number }) => r.version);
    expect(versions.length).toBeGreaterThanOrEqual(3);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(versions[0]).toBeGreaterThan(firstRevision.version);

    // Strangers: the catalog of S under C's path, or C reading S's path — both NOT_FOUND, like a missing id.
    expect(
      (
        await http()
          .get(sc(C, `/catalogs/${catalogId}`))
          .set(bearer(cOwner))
          .expect(404)
      ).body.code,
    ).toBe('NOT_FOUND');
    expect(
      (
        await http()
          .get(sc(C, '/catalogs/00000000-0000-4000-8000-000000000000'))
          .set(bearer(cOwner))
          .expect(404)
      ).body.code,
    ).toBe('NOT_FOUND');
    await http()
      .get(sc(S, `/catalogs/${catalogId}/fields`))
      .set(bearer(cOwner))
      .expect(404);
  });

  it('connections: create in both forms, validation, views, states', async () => {
    const opened = await http()
      .post(sc(S, `/catalogs/${catalogId}/connections`))
      .set(bearer(sOwner))
      .send({ name: 'Open', accessControl: 'public' })
      .expect(201);
    publicConn = opened.body.payload.id;
    // Spec 2.14 writes a public connection's access control as the string `public`; the answer does too.
    expect(opened.body.payload.accessControl).toBe('public');
    const wl = await http()
      .post(sc(S, '/connections'))
      .set(bearer(sOwner))
      .send({
        name: 'Partners',
        sourceCatalogId: catalogId,
        shareMode: 'multiple',
        accessControl: { mode: 'whitelist', allowedOrganizations: [B.id] },
        shareScope: {
          mode: 'filter',
          filterGroup: {
            operator: 'AND',
            conditions: [{ fieldId: 'unit_price', operator: 'gte', value: 10 }],
          },
        },
        defaultReceiverConfig: { suggestedAcceptMode: 'manual' },
        propagationEvents: {
          eventTypes: ['row_created', 'row_updated'],
          batchMerge: true,
          batchWindowSeconds: 300,
        },
      })
      .expect(201);
    whitelistConn = wl.body.payload.id;
    expect(wl.body.payload).toMatchObject({
      view: 'owner',
      status: 'active',
      shareMode: 'multiple',
      sourceCatalogId: catalogId,
      sourceOrganization: { id: S.id, name: 'Supplier Co' },
      accessControl: { mode: 'whitelist', allowedOrganizations: [B.id] },
      shareScope: { mode: 'filter' },
      propagationEvents: {
        eventTypes: ['row_created', 'row_updated'],
        batchMerge: true,
        batchWindowSeconds: 300,
      },
    });
    expect(wl.body.payload.catalog).toMatchObject({ id: catalogId, name: 'Spring catalog', fieldCount: 4 });
    approvalConn = (
      await http()
        .post(sc(S, '/connections'))
        .set(bearer(sOwner))
        .send({ name: 'Ask', sourceCatalogId: catalogId })
        .expect(201)
    ).body.payload.id;
    expect(
      (
        await http()
          .get(sc(S, `/connections/${approvalConn}`))
          .set(bearer(sGuest))
          .expect(200)
      ).body.payload.accessControl.mode,
    ).toBe('approval');

    // Only owners/admins create; every enum and field id is checked.
    await http()
      .post(sc(S, '/connections'))
      .set(bearer(sMember))
      .send({ name: 'x', sourceCatalogId: catalogId })
      .expect(403);
    const invalid: Array<[Record<string, unknown>, string]> = [
      [{ accessControl: { mode: 'bogus' } }, 'accessControl.mode'],
      [{ accessControl: 'whitelist' }, 'accessControl'],
      [
        { accessControl: { mode: 'whitelist', allowedOrganizations: ['not-a-uuid'] } },
        'accessControl.allowedOrganizations',
      ],
      [{ propagationEvents: { eventTypes: ['row_moved'] } }, 'propagationEvents.eventTypes[0]'],
      [{ propagationEvents: { batchWindowSeconds: 0 } }, 'propagationEvents.batchWindowSeconds'],
      [{ shareScope: { type: 'some' } }, 'shareScope.type'],
      [
        { shareScope: { mode: 'filter', filterGroup: { operator: 'XOR', conditions: [] } } },
        'shareScope.filterGroup.operator',
      ],
      [
        {
          shareScope: {
            mode: 'filter',
            filterGroup: { operator: 'AND', conditions: [{ fieldId: 'sku', operator: 'like', value: 'A' }] },
          },
        },
        'shareScope.filterGroup.conditions[0].operator',
      ],
      [
        {
          shareScope: {
            mode: 'filter',
            filterGroup: { operator: 'AND', conditions: [{ fieldId: 'ghost', operator: 'eq', value: 1 }] },
          },
        },
        'shareScope.filterGroup.conditions[0].fieldId',
      ],
      [
        { defaultReceiverConfig: { suggestedAcceptMode: 'sometimes' } },
        'defaultReceiverConfig.suggestedAcceptMode',
      ],
      [{ sourceCatalogId: undefined }, 'sourceCatalogId'],
    ];
    for (const [body, field] of invalid) {
      const res = await http()
        .post(sc(S, '/connections'))
        .set(bearer(sOwner))
        .send({ name: 'bad', sourceCatalogId: catalogId, ...body });
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(problemsOf(res.body).map((d: { field: string }) => d.field)).toContain(field);
    }
    await http()
      .post(sc(C, '/connections'))
      .set(bearer(cOwner))
      .send({ name: 'x', sourceCatalogId: catalogId })
      .expect(404);

    // List (own connections), the buyer's shared view, and strangers.
    const list = await http()
      .get(sc(S, `/catalogs/${catalogId}/connections`))
      .set(bearer(sMember))
      .expect(200);
    expect(list.body.payload.total).toBe(3);
    const shared = await http()
      .get(sc(B, `/connections/${whitelistConn}`))
      .set(bearer(bGuest))
      .expect(200);
    expect(shared.body.payload).toMatchObject({
      view: 'shared',
      accessControl: { mode: 'whitelist' },
      sourceOrganization: { name: 'Supplier Co' },
    });
    expect(shared.body.payload.accessControl.allowedOrganizations).toBeUndefined();
    expect(shared.body.payload.shareScope).toBeUndefined();
    expect(shared.body.payload.catalog.fields).toHaveLength(4);
    await http()
      .get(sc(C, `/connections/${publicConn}`))
      .set(bearer(cOwner))
      .expect(200);
    const hidden = await http()
      .get(sc(C, `/connections/${whitelistConn}`))
      .set(bearer(cOwner))
      .expect(404);
    const missing = await http()
      .get(sc(C, '/connections/00000000-0000-4000-8000-000000000000'))
      .set(bearer(cOwner))
      .expect(404);
    expect(hidden.body).toEqual(missing.body);
    expect((await http().get(sc(C, '/connections')).set(bearer(cOwner)).expect(200)).body.payload.total).toBe(
      0,
    );

    // Update and the state machine.
    expect(
      (
        await http()
          .patch(sc(S, `/connections/${publicConn}`))
          .set(bearer(sOwner))
          .send({ name: 'Open to all' })
          .expect(200)
      ).body.payload.name,
    ).toBe('Open to all');
    await http()
      .patch(sc(S, `/connections/${publicConn}`))
      .set(bearer(sMember))
      .send({ name: 'x' })
      .expect(403);
    expect(
      (
        await http()
          .post(sc(S, `/connections/${publicConn}/pause`))
          .set(bearer(sOwner))
          .expect(200)
      ).body.payload.status,
    ).toBe('paused');
    expect(
      (
        await http()
          .post(sc(S, `/connections/${publicConn}/pause`))
          .set(bearer(sOwner))
          .expect(409)
      ).body.code,
    ).toBe('INVALID_STATE');
    expect(
      (
        await http()
          .post(sc(S, `/connections/${publicConn}/resume`))
          .set(bearer(sOwner))
          .expect(200)
      ).body.payload.status,
    ).toBe('active');
    const doomed = (
      await http()
        .post(sc(S, '/connections'))
        .set(bearer(sOwner))
        .send({ name: 'Doomed', sourceCatalogId: catalogId, accessControl: 'public' })
        .expect(201)
    ).body.payload.id;
    expect(
      (
        await http()
          .post(sc(S, `/connections/${doomed}/disable`))
          .set(bearer(sOwner))
          .expect(200)
      ).body.payload.status,
    ).toBe('disabled');
    await http()
      .post(sc(S, `/connections/${doomed}/resume`))
      .set(bearer(sOwner))
      .expect(409);
    await http()
      .patch(sc(S, `/connections/${doomed}`))
      .set(bearer(sOwner))
      .send({ name: 'x' })
      .expect(409);
    await http()
      .post(sc(S, `/connections/${doomed}/share-link`))
      .set(bearer(sOwner))
      .send({})
      .expect(409);
    await http()
      .post(sc(S, `/connections/${publicConn}/pause`))
      .set(bearer(sMember))
      .expect(403);
    expect(
      (
        await http().get(sc(S, '/connections?status=disabled')).set(bearer(sOwner)).expect(200)
      ).body.payload.items.map((c: { id: string }) => c.id),
    ).toEqual([doomed]);

    // A catalog with sharing off takes no connections.
    const closed = (
      await http()
        .post(sc(S, '/catalogs'))
        .set(bearer(sOwner))
        .send({ name: 'Private', catalogType: 'supplier', sharingEnabled: false })
        .expect(201)
    ).body.payload.id;
    expect(
      (
        await http()
          .post(sc(S, `/catalogs/${closed}/connections`))
          .set(bearer(sOwner))
          .send({ name: 'x' })
          .expect(409)
      ).body.code,
    ).toBe('INVALID_STATE');
  });

  it('share links: URL, QR code, reads spend no use, expiry, revocation', async () => {
    await http()
      .post(sc(S, `/connections/${whitelistConn}/share-link`))
      .set(bearer(sMember))
      .send({})
      .expect(403);
    await http()
      .post(sc(S, `/connections/${whitelistConn}/share-link`))
      .set(bearer(sOwner))
      .send({ expiresAt: '2000-01-01T00:00:00Z' })
      .expect(400);
    await http()
      .post(sc(S, `/connections/${whitelistConn}/share-link`))
      .set(bearer(sOwner))
      .send({ maxUses: 0 })
      .expect(400);
    const link = await http()
      .post(sc(S, `/connections/${whitelistConn}/share-link`))
      .set(bearer(sOwner))
      .send({ maxUses: 2 })
      .expect(201);
    const { shareUrl, qrCode, code, expiresAt } = link.body.payload;
    expect(shareUrl).toBe(`http://127.0.0.1/connect/share/${code}`);
    expect(qrCode).toMatch(/^data:image\/png;base64,/);
    expect(expiresAt).toBeNull();

    const first = await http().get(`/connect/share/${code}`).set(bearer(cOwner)).expect(200);
    expect(first.body.payload).toMatchObject({
      connectionId: whitelistConn,
      name: 'Partners',
      sourceOrganization: { id: S.id, name: 'Supplier Co' },
      catalog: { id: catalogId, name: 'Spring catalog', catalogType: 'product', fieldCount: 4 },
      shareMode: 'multiple',
      accessMode: 'whitelist',
      remainingUses: 2,
    });
    // A read: resolving the code spends no use (a use is an organization admitted through the link, see
    // share-link-admission.e2e-spec.ts).
    expect(
      (await http().get(`/connect/share/${code}`).set(bearer(cOwner)).expect(200)).body.payload.remainingUses,
    ).toBe(2);
    await http().get(`/connect/share/${code}`).expect(401);
    expect((await http().get('/connect/share/not-a-code').set(bearer(cOwner)).expect(404)).body.code).toBe(
      'NOT_FOUND',
    );
    await http().get(`${API}/connect/share/${code}`).set(bearer(cOwner)).expect(404);

    // Expiry (moved into the past in the database rather than waiting) and revocation.
    const timed = await http()
      .post(sc(S, `/connections/${whitelistConn}/share-link`))
      .set(bearer(sOwner))
      .send({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
      .expect(201);
    await http().get(`/connect/share/${timed.body.payload.code}`).set(bearer(cOwner)).expect(200);
    await t.dataSource.query(
      `UPDATE connection_share_links SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [timed.body.payload.id],
    );
    const expired = await http()
      .get(`/connect/share/${timed.body.payload.code}`)
      .set(bearer(cOwner))
      .expect(410);
    expect(expired.body.code).toBe('SHARE_LINK_EXPIRED');
    const revocable = await http()
      .post(sc(S, `/connections/${whitelistConn}/share-link`))
      .set(bearer(sOwner))
      .send({})
      .expect(201);
    await http()
      .delete(sc(S, `/connections/${whitelistConn}/share-links/${revocable.body.payload.id}`))
      .set(bearer(sOwner))
      .expect(200);
    expect(
      (await http().get(`/connect/share/${revocable.body.payload.code}`).set(bearer(cOwner)).expect(410)).body
        .code,
    ).toBe('SHARE_LINK_EXPIRED');
    const links = await http()
      .get(sc(S, `/connections/${whitelistConn}/share-links`))
      .set(bearer(sOwner))
      .expect(200);
    expect(links.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 3, totalPages: 1 });
    expect(links.body.payload.items).toHaveLength(3);
    expect(JSON.stringify(links.body.payload)).not.toContain(code);
    expect(links.body.payload.items.map((item: { uses: number }) => item.uses)).toEqual([0, 0, 0]);
  });

  it('order books: generated fields, preview, bindings in every access mode, supplier decisions', async () => {
    const ob = await http()
      .post(sc(B, '/orderbooks'))
      .set(bearer(bMember))
      .send({
        name: 'Purchasing',
        description: 'Spring',
        sourceConnectionIds: [publicConn],
        fields: [
          { name: 'Quantity', type: 'number' },
          { name: 'Price', type: 'currency' },
        ],
      })
      .expect(201);
    orderBookId = ob.body.payload.id;
    expect(ob.body.payload).toMatchObject({
      organizationId: B.id,
      workspaceId: null,
      docType: 'orderbook',
      sourceConnectionIds: [publicConn],
    });
    expect(ob.body.payload.generatedFields).toEqual([
      {
        id: 'sku',
        name: 'SKU',
        type: 'text',
        sourceCatalogId: catalogId,
        sourceFieldId: 'sku',
        connectionId: publicConn,
      },
      {
        id: 'unit_price',
        name: 'Unit Price',
        type: 'number',
        sourceCatalogId: catalogId,
        sourceFieldId: 'unit_price',
        connectionId: publicConn,
      },
      {
        id: 'colour',
        name: 'Colour',
        type: 'single_select',
        sourceCatalogId: catalogId,
        sourceFieldId: 'colour',
        connectionId: publicConn,
      },
      {
        id: 'weight',
        name: 'Weight',
        type: 'number',
        sourceCatalogId: catalogId,
        sourceFieldId: 'weight',
        connectionId: publicConn,
      },
    ]);
    const fields = await http()
      .get(sc(B, `/orderbooks/${orderBookId}/fields`))
      .set(bearer(bGuest))
      .expect(200);
    expect(
      fields.body.payload.items.map((f: { id: string; sourceFieldId: string | null }) => [f.id, f.sourceFieldId]),
    ).toEqual([
      ['sku', 'sku'],
      ['unit_price', 'unit_price'],
      ['colour', 'colour'],
      ['weight', 'weight'],
      ['quantity', null],
      ['price', null],
    ]);
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}?organizationId=${B.id}`)
      .set(bearer(bGuest))
      .expect(200);
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}?organizationId=${B.id}`)
      .set(bearer(sOwner))
      .expect(404);
    await http()
      .get(sc(B, `/orderbooks/${orderBookId}`))
      .set(bearer(sOwner))
      .expect(404);
    await http().post(sc(B, '/orderbooks')).set(bearer(bGuest)).send({ name: 'x' }).expect(403);
    // C cannot generate fields from a whitelist connection it does not see, unless it holds a code.
    await http()
      .post(sc(C, '/orderbooks'))
      .set(bearer(cOwner))
      .send({ name: 'x', sourceConnectionIds: [whitelistConn] })
      .expect(404);
    const code = (
      await http()
        .post(sc(S, `/connections/${whitelistConn}/share-link`))
        .set(bearer(sOwner))
        .send({ maxUses: 5 })
        .expect(201)
    ).body.payload.code;
    cOrderBookId = (
      await http()
        .post(sc(C, '/orderbooks'))
        .set(bearer(cOwner))
        .send({ name: 'Third', sourceConnectionIds: [whitelistConn], shareCode: code })
        .expect(201)
    ).body.payload.id;

    // Preview: generated fields map with confidence 1; similar names/types are suggested; the rest listed.
    const preview = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/field-mapping/preview`))
      .set(bearer(bGuest))
      .send({ connectionId: publicConn })
      .expect(200);
    expect(
      preview.body.payload.suggestedMappings.map(
        (m: { sourceFieldId: string; targetFieldId: string; confidence: number }) => [
          m.sourceFieldId,
          m.targetFieldId,
          m.confidence,
        ],
      ),
    ).toEqual([
      ['colour', 'colour', 1],
      ['sku', 'sku', 1],
      ['unit_price', 'unit_price', 1],
      ['weight', 'weight', 1],
    ]);
    expect(preview.body.payload.unmappedSourceFields).toEqual([]);
    expect(preview.body.payload.unmappedTargetFields.map((f: { id: string }) => f.id)).toEqual([
      'quantity',
      'price',
    ]);
    // A connection created without accessControl is open to ask (approval mode, no list): any buyer may look and ask.
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/field-mapping/preview`))
      .set(bearer(bOwner))
      .send({ connectionId: approvalConn })
      .expect(200);
    // A whitelist still hides the connection from everyone else.
    await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/field-mapping/preview`))
      .set(bearer(cOwner))
      .send({ connectionId: whitelistConn })
      .expect(404);

    // Public: active at once, with the default mapping to the generated fields; a second live binding is refused.
    const pub = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/bindings`))
      .set(bearer(bMember))
      .send({ connectionId: publicConn, targetOrderBookId: orderBookId })
      .expect(201);
    publicBinding = pub.body.payload.id;
    expect(pub.body.payload).toMatchObject({
      status: 'active',
      admittedVia: 'public',
      supplierOrganizationId: S.id,
      receiverFilter: { acceptMode: 'auto' },
    });
    expect(pub.body.payload.fieldMapping.rules).toHaveLength(4);
    expect(pub.body.payload.conflictResolution).toEqual({
      defaultStrategy: 'keep_upstream',
      fieldStrategies: {},
    });
    expect(
      (
        await http()
          .post(sc(B, `/orderbooks/${orderBookId}/bindings`))
          .set(bearer(bMember))
          .send({ connectionId: publicConn })
          .expect(409)
      ).body.code,
    ).toBe('ALREADY_EXISTS');
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/bindings`))
      .set(bearer(bGuest))
      .send({ connectionId: publicConn })
      .expect(403);

    // Two concurrent binds of one order book to one connection: one wins, the other is ALREADY_EXISTS.
    const race = (
      await http().post(sc(B, '/orderbooks')).set(bearer(bOwner)).send({ name: 'Race' }).expect(201)
    ).body.payload.id;
    const bindRace = await Promise.all(
      [0, 1].map(() =>
        http()
          .post(sc(B, `/orderbooks/${race}/bindings`))
          .set(bearer(bOwner))
          .send({ connectionId: publicConn, fieldMapping: { rules: [] } }),
      ),
    );
    expect(bindRace.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(bindRace.find((res) => res.status === 409)?.body.code).toBe('ALREADY_EXISTS');

    // Whitelisted buyer: active at once, with a full configuration.
    const wl = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/bindings`))
      .set(bearer(bOwner))
      .send({
        connectionId: whitelistConn,
        fieldMapping: {
          unmappedFields: 'ignore',
          rules: [
            {
              sourceFieldId: 'sku',
              targetFieldId: 'sku',
              transformType: 'direct',
              propagationMode: 'oneway',
            },
            {
              sourceFieldId: 'unit_price',
              targetFieldId: 'price',
              transformType: 'unit_convert',
              unitConversion: {
                sourceUnit: 'USD',
                targetUnit: 'EUR',
                conversionType: 'currency',
                exchangeRateSource: 'daily',
              },
            },
            {
              sourceFieldId: 'weight',
              targetFieldId: 'weight',
              transformType: 'unit_convert',
              unitConversion: { fromUnit: 'kg', toUnit: 'lb', rate: 2.20462 },
            },
            {
              sourceFieldId: 'colour',
              targetFieldId: 'colour',
              transformType: 'option_mapping',
              optionMapping: { mappings: { red: 'red' }, unmappedStrategy: 'keep_original' },
            },
            {
              sourceFieldId: 'sku',
              targetFieldId: 'quantity',
              transformType: 'formula',
              formula: 'FLOOR({unit_price} * 2)',
            },
            {
              sourceFieldIds: ['sku', 'colour'],
              targetFieldId: 'sku',
              transformType: 'merge',
              separator: '-',
            },
          ],
        },
        receiverFilter: {
          filterGroup: {
            operator: 'OR',
            conditions: [{ fieldId: 'unit_price', operator: 'in', values: [10, 20] }],
            groups: [{ operator: 'AND', conditions: [{ field: 'sku', operator: 'startsWith', value: 'A' }] }],
          },
          acceptMode: 'selective',
          manualAcceptRules: {
            autoAcceptIf: {
              operator: 'AND',
              conditions: [{ fieldId: 'unit_price', operator: 'lt', value: 100 }],
            },
            autoRejectIf: {
              operator: 'AND',
              conditions: [{ fieldId: 'unit_price', operator: 'gt', value: 1000 }],
            },
            defaultAction: 'manual',
          },
          deduplicationStrategy: 'by_field',
          deduplicationFieldIds: ['sku'],
        },
        conflictResolution: {
          defaultStrategy: 'latest_wins',
          fieldStrategies: { price: { strategy: 'keep_local' } },
        },
      })
      .expect(201);
    expect(wl.body.payload).toMatchObject({ status: 'active', admittedVia: 'whitelist' });
    expect(wl.body.payload.fieldMapping.rules[1].unitConversion).toMatchObject({
      sourceUnit: 'USD',
      targetUnit: 'EUR',
      conversionType: 'currency',
    });
    expect(wl.body.payload.fieldMapping.rules[2].unitConversion).toEqual({
      sourceUnit: 'kg',
      targetUnit: 'lb',
      rate: 2.20462,
    });
    expect(wl.body.payload.receiverFilter.filterGroup.groups[0].conditions[0]).toEqual({
      fieldId: 'sku',
      operator: 'startsWith',
      value: 'A',
    });

    // Every enum is checked, with the path of the wrong value.
    const invalid: Array<[Record<string, unknown>, string]> = [
      [{ receiverFilter: { acceptMode: 'sometimes' } }, 'receiverFilter.acceptMode'],
      [
        { receiverFilter: { manualAcceptRules: { defaultAction: 'reject' } } },
        'receiverFilter.manualAcceptRules.defaultAction',
      ],
      [
        { receiverFilter: { deduplicationStrategy: 'by_magic', deduplicationFieldIds: ['sku'] } },
        'receiverFilter.deduplicationStrategy',
      ],
      [
        { receiverFilter: { deduplicationStrategy: 'by_field', deduplicationFieldIds: ['sku', 'price'] } },
        'receiverFilter.deduplicationFieldIds',
      ],
      [
        {
          fieldMapping: {
            rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku', transformType: 'teleport' }],
          },
        },
        'fieldMapping.rules[0].transformType',
      ],
      [
        {
          fieldMapping: {
            rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku', propagationMode: 'twoway' }],
          },
        },
        'fieldMapping.rules[0].propagationMode',
      ],
      [{ fieldMapping: { unmappedFields: 'drop', rules: [] } }, 'fieldMapping.unmappedFields'],
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'weight',
                targetFieldId: 'weight',
                transformType: 'unit_convert',
                unitConversion: { sourceUnit: 'kg', targetUnit: 'g', conversionType: 'volume' },
              },
            ],
          },
        },
        'fieldMapping.rules[0].unitConversion.conversionType',
      ],
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'price',
                targetFieldId: 'price',
                transformType: 'unit_convert',
                unitConversion: { sourceUnit: 'USD', targetUnit: 'EUR', exchangeRateSource: 'weekly' },
              },
            ],
          },
        },
        'fieldMapping.rules[0].unitConversion.exchangeRateSource',
      ],
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'colour',
                targetFieldId: 'colour',
                transformType: 'option_mapping',
                optionMapping: { mappings: {}, unmappedStrategy: 'drop' },
              },
            ],
          },
        },
        'fieldMapping.rules[0].optionMapping.unmappedStrategy',
      ],
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'sku',
                targetFieldId: 'sku',
                transformType: 'format',
                formatConfig: { template: 'no placeholder' },
              },
            ],
          },
        },
        'fieldMapping.rules[0].formatConfig.template',
      ],
      [
        { fieldMapping: { rules: [{ sourceFieldId: 'ghost', targetFieldId: 'sku' }] } },
        'fieldMapping.rules[0].sourceFieldId',
      ],
      // A formula is parsed when the rule is written, and the source fields it reads must exist.
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'unit_price',
                targetFieldId: 'sku',
                transformType: 'formula',
                formula: 'FLOOR(unit_price *',
              },
            ],
          },
        },
        'fieldMapping.rules[0].formula',
      ],
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'unit_price',
                targetFieldId: 'sku',
                transformType: 'formula',
                formula: 'unit_cost * 1.2',
              },
            ],
          },
        },
        'fieldMapping.rules[0].formula',
      ],
      [
        { fieldMapping: { rules: [{ sourceFieldId: 'sku', targetFieldId: 'ghost' }] } },
        'fieldMapping.rules[0].targetFieldId',
      ],
      [{ conflictResolution: { defaultStrategy: 'coin_flip' } }, 'conflictResolution.defaultStrategy'],
      [
        { conflictResolution: { fieldStrategies: { price: { strategy: 'keep_both' } } } },
        'conflictResolution.fieldStrategies.price.strategy',
      ],
      [{ targetOrderBookId: cOrderBookId }, 'targetOrderBookId'],
    ];
    // A connection the buyer may not see answers 404 before its body is judged.
    await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/bindings`))
      .set(bearer(cOwner))
      .send({ connectionId: whitelistConn, receiverFilter: { acceptMode: 'sometimes' } })
      .expect(404);
    const second = (
      await http()
        .post(sc(B, '/orderbooks'))
        .set(bearer(bOwner))
        .send({
          name: 'Second',
          sourceConnectionIds: [publicConn],
          fields: [{ name: 'Price', type: 'currency' }],
        })
        .expect(201)
    ).body.payload.id;
    for (const [body, field] of invalid) {
      const res = await http()
        .post(sc(B, `/orderbooks/${second}/bindings`))
        .set(bearer(bOwner))
        .send({ connectionId: publicConn, ...body });
      expect([res.status, res.body.code, field]).toEqual([400, 'VALIDATION_ERROR', field]);
      expect(problemsOf(res.body).map((d: { field: string }) => d.field)).toContain(field);
    }
    expect(
      (
        await http()
          .get(sc(B, `/orderbooks/${second}/bindings`))
          .set(bearer(bOwner))
          .expect(200)
      ).body.payload.total,
    ).toBe(0);

    // Outside the whitelist: refused without a code (NOT_FOUND, like a missing connection); with one, pending.
    const refused = await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/bindings`))
      .set(bearer(cOwner))
      .send({ connectionId: whitelistConn })
      .expect(404);
    expect(refused.body.code).toBe('NOT_FOUND');
    const viaCode = await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/bindings`))
      .set(bearer(cOwner))
      .send({ connectionId: whitelistConn, shareCode: code })
      .expect(201);
    expect(viaCode.body.payload).toMatchObject({ status: 'pending', admittedVia: 'share_link' });
    const [pendingMail] = await t.dataSource.query(
      `SELECT recipient, data FROM notifications WHERE kind = 'binding_pending_approval' AND data->>'bindingId' = $1`,
      [viaCode.body.payload.id],
    );
    expect(pendingMail).toMatchObject({
      recipient: sOwner.email,
      data: { connectionId: whitelistConn, buyerOrganizationId: C.id, admittedVia: 'share_link' },
    });
    // The supplier sees the binding's state and the buyer's name only.
    const supplierView = await http()
      .get(sc(S, `/connections/${whitelistConn}/bindings?status=pending`))
      .set(bearer(sGuest))
      .expect(200);
    expect(supplierView.body.payload.items).toEqual([
      expect.objectContaining({
        id: viaCode.body.payload.id,
        status: 'pending',
        admittedVia: 'share_link',
        buyerOrganization: { id: C.id, name: 'Third Co' },
      }),
    ]);
    expect(supplierView.body.payload.items[0].fieldMapping).toBeUndefined();
    await http()
      .post(sc(S, `/connections/${whitelistConn}/bindings/${viaCode.body.payload.id}/approve`))
      .set(bearer(sMember))
      .send({})
      .expect(403);
    await http()
      .post(sc(C, `/connections/${whitelistConn}/bindings/${viaCode.body.payload.id}/approve`))
      .set(bearer(cOwner))
      .send({})
      .expect(404);
    const approved = await http()
      .post(sc(S, `/connections/${whitelistConn}/bindings/${viaCode.body.payload.id}/approve`))
      .set(bearer(sOwner))
      .send({ note: 'welcome' })
      .expect(200);
    expect(approved.body.payload).toMatchObject({ status: 'active', reviewNote: 'welcome' });
    const [decidedMail] = await t.dataSource.query(
      `SELECT recipient FROM notifications WHERE kind = 'binding_approved' AND data->>'bindingId' = $1`,
      [viaCode.body.payload.id],
    );
    expect(decidedMail.recipient).toBe(cOwner.email);
    expect(
      (
        await http()
          .post(sc(S, `/connections/${whitelistConn}/bindings/${viaCode.body.payload.id}/approve`))
          .set(bearer(sOwner))
          .send({})
          .expect(409)
      ).body.code,
    ).toBe('INVALID_STATE');
    expect(
      (
        await http()
          .get(sc(C, `/orderbooks/${cOrderBookId}/bindings/${viaCode.body.payload.id}`))
          .set(bearer(cOwner))
          .expect(200)
      ).body.payload.status,
    ).toBe('active');
    // Now bound, C sees the shared view of the connection.
    await http()
      .get(sc(C, `/connections/${whitelistConn}`))
      .set(bearer(cOwner))
      .expect(200);

    // Approval mode: a listed organization or a share code waits; the supplier rejects; a new request may follow.
    await http()
      .patch(sc(S, `/connections/${approvalConn}`))
      .set(bearer(sOwner))
      .send({ accessControl: { mode: 'approval', allowedOrganizations: [B.id] } })
      .expect(200);
    const asked = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/bindings`))
      .set(bearer(bMember))
      .send({ connectionId: approvalConn })
      .expect(201);
    expect(asked.body.payload).toMatchObject({ status: 'pending', admittedVia: 'approval' });
    await http()
      .post(sc(S, `/connections/${approvalConn}/bindings/${asked.body.payload.id}/reject`))
      .set(bearer(sOwner))
      .send({ note: 'no' })
      .expect(200);
    expect(
      (
        await http()
          .get(sc(B, `/orderbooks/${orderBookId}/bindings?status=rejected`))
          .set(bearer(bGuest))
          .expect(200)
      ).body.payload.items,
    ).toEqual([expect.objectContaining({ id: asked.body.payload.id, status: 'rejected', reviewNote: 'no' })]);
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/bindings`))
      .set(bearer(bMember))
      .send({ connectionId: approvalConn })
      .expect(201);
    const approvalCode = (
      await http()
        .post(sc(S, `/connections/${approvalConn}/share-link`))
        .set(bearer(sOwner))
        .send({})
        .expect(201)
    ).body.payload.code;
    expect(
      (
        await http()
          .post(sc(C, `/orderbooks/${cOrderBookId}/bindings`))
          .set(bearer(cOwner))
          .send({ connectionId: approvalConn, shareCode: approvalCode })
          .expect(201)
      ).body.payload.status,
    ).toBe('pending');
    // A public connection admits whatever code is sent; a disabled connection takes no bindings.
    await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/bindings`))
      .set(bearer(cOwner))
      .send({ connectionId: publicConn, shareCode: 'wrong' })
      .expect(201);
    await http()
      .post(sc(S, `/connections/${approvalConn}/disable`))
      .set(bearer(sOwner))
      .expect(200);
    const onDisabled = await http()
      .post(sc(B, `/orderbooks/${second}/bindings`))
      .set(bearer(bOwner))
      .send({ connectionId: approvalConn, fieldMapping: { rules: [] } });
    expect([onDisabled.status, onDisabled.body.code]).toEqual([409, 'INVALID_STATE']);
  });

  it('sync requests and sync logs of an order book', async () => {
    const accepted = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({
        requestType: 'manual',
        source: { note: 'import' },
        status: 'accepted',
        message: 'initial load',
        changes: [
          {
            operation: 'create_row',
            rowId: 'o1',
            values: [
              { fieldId: 'sku', value: text('A-1') },
              { fieldId: 'quantity', value: { number: 3 } },
            ],
          },
        ],
      })
      .expect(201);
    expect(accepted.body.payload).toMatchObject({
      status: 'accepted',
      requestType: 'manual',
      message: 'initial load',
      orderBookId,
    });
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}/data/o1?organizationId=${B.id}`)
      .set(bearer(bGuest))
      .expect(200);
    // The document request it was merged as carries the message as its description.
    const documentRequest = await http()
      .get(`${API}/doc/orderbook/${orderBookId}/requests/${accepted.body.payload.documentRequestId}?organizationId=${B.id}`)
      .set(bearer(bMember))
      .expect(200);
    expect(documentRequest.body.payload).toMatchObject({ status: 'merged', description: 'initial load' });
    const [event] = await t.dataSource.query(
      `SELECT organization_id, payload FROM outbox WHERE event_type = 'orderbook_sync_request_created' AND payload->>'requestId' = $1`,
      [accepted.body.payload.requestId],
    );
    expect(event.organization_id).toBe(B.id);
    expect(event.payload).toMatchObject({
      requestId: accepted.body.payload.requestId,
      orderBookId,
      productInfo: { changes: 1 },
    });

    const pending = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({
        changes: [
          { operation: 'create_row', rowId: 'o2', values: { sku: text('A-2') } },
          { operation: 'delete_row', rowId: 'o1' },
        ],
        productInfo: { sku: 'A-2' },
      })
      .expect(201);
    expect(pending.body.payload).toMatchObject({ status: 'pending', productInfo: { sku: 'A-2' } });
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}/data/o2?organizationId=${B.id}`)
      .set(bearer(bGuest))
      .expect(404);
    const list = await http()
      .get(sc(B, `/orderbooks/${orderBookId}/requests?status=pending`))
      .set(bearer(bGuest))
      .expect(200);
    expect(list.body.payload.items.map((r: { requestId: string }) => r.requestId)).toEqual([
      pending.body.payload.requestId,
    ]);
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests/${pending.body.payload.requestId}/accept`))
      .set(bearer(bGuest))
      .send({})
      .expect(403);
    const done = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests/${pending.body.payload.requestId}/accept`))
      .set(bearer(bMember))
      .send({})
      .expect(200);
    expect(done.body.payload.status).toBe('accepted');
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}/data/o2?organizationId=${B.id}`)
      .set(bearer(bGuest))
      .expect(200);
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}/data/o1?organizationId=${B.id}`)
      .set(bearer(bGuest))
      .expect(404);
    expect(
      (
        await http()
          .post(sc(B, `/orderbooks/${orderBookId}/requests/${pending.body.payload.requestId}/reject`))
          .set(bearer(bMember))
          .send({})
          .expect(409)
      ).body.code,
    ).toBe('INVALID_STATE');

    const toReject = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ changes: [{ operation: 'update_row', rowId: 'o2', values: { quantity: { number: 9 } } }] })
      .expect(201);
    expect(
      (
        await http()
          .post(sc(B, `/orderbooks/${orderBookId}/requests/${toReject.body.payload.requestId}/reject`))
          .set(bearer(bOwner))
          .send({ note: 'not now' })
          .expect(200)
      ).body.payload,
    ).toMatchObject({ status: 'rejected', message: null });
    const requestId = '11111111-2222-4333-8444-555555555555';
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ requestId, status: 'rejected', changes: [{ operation: 'delete_row', rowId: 'o2' }] })
      .expect(201);
    expect(
      (
        await http()
          .post(sc(B, `/orderbooks/${orderBookId}/requests`))
          .set(bearer(bMember))
          .send({ requestId, changes: [{ operation: 'delete_row', rowId: 'o2' }] })
          .expect(409)
      ).body.code,
    ).toBe('ALREADY_EXISTS');
    // The id is unique per organization only: another tenant may use it, and learns nothing.
    await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/requests`))
      .set(bearer(cOwner))
      .send({ requestId, status: 'rejected', changes: [{ operation: 'delete_row', rowId: 'x' }] })
      .expect(201);
    // A client may choose any URL-safe id, not only a UUID; it names the request in the paths as given.
    const clientId = 'req-2024_0001';
    const chosen = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({
        requestId: clientId,
        changes: [{ operation: 'update_row', rowId: 'o2', values: { quantity: { number: 5 } } }],
      })
      .expect(201);
    expect(chosen.body.payload).toMatchObject({ requestId: clientId, status: 'pending' });
    await http()
      .get(sc(B, `/orderbooks/${orderBookId}/requests/${clientId}`))
      .set(bearer(bGuest))
      .expect(200);
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ requestId: clientId, changes: [{ operation: 'delete_row', rowId: 'o2' }] })
      .expect(409);
    const rejectedByClientId = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests/${clientId}/reject`))
      .set(bearer(bOwner))
      .send({})
      .expect(200);
    expect(rejectedByClientId.body.payload).toMatchObject({ requestId: clientId, status: 'rejected' });
    await http()
      .post(sc(C, `/orderbooks/${cOrderBookId}/requests`))
      .set(bearer(cOwner))
      .send({ requestId: clientId, status: 'rejected', changes: [{ operation: 'delete_row', rowId: 'x' }] })
      .expect(201);
    const malformed = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ requestId: 'req 1/2', changes: [{ operation: 'delete_row', rowId: 'o2' }] })
      .expect(400);
    expect(malformed.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'requestId' }),
    });
    await http()
      .get(sc(B, `/orderbooks/${orderBookId}/requests/no%20such`))
      .set(bearer(bGuest))
      .expect(404);
    const badOp = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ changes: [{ operation: 'upsert_row', rowId: 'x' }, { operation: 'update_row' }] })
      .expect(400);
    expect(problemsOf(badOp.body).map((d: { field: string }) => d.field)).toEqual([
      'changes[0].operation',
      'changes[1].rowId',
    ]);
    // A change in another shape (`data` of spec 2.9's Change, a document request's `target{kind,rowId}` and
    // `newValue`) is refused by name; it used to be recorded as a proposal with no values (201).
    const requestsBefore = (
      await http().get(sc(B, `/orderbooks/${orderBookId}/requests`)).set(bearer(bGuest)).expect(200)
    ).body.payload.total;
    const otherShape = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({
        changes: [
          { operation: 'create_row', data: { name: 'Bolt' } },
          { operation: 'update_row', target: { kind: 'row', rowId: 'o2' }, newValue: { name: 'Nut' } },
        ],
      })
      .expect(400);
    expect(otherShape.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(otherShape.body).map((d: { field: string }) => d.field)).toEqual([
      'changes[0].data',
      'changes[1].newValue',
      'changes[1].target.kind',
      'changes[1].target.rowId',
    ]);
    const twoRows = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ changes: [{ operation: 'delete_row', rowId: 'o1', target: { row: 'o2' } }] })
      .expect(400);
    expect(problemsOf(twoRows.body).map((d: { field: string }) => d.field)).toEqual(['changes[0].target.row']);
    expect(
      (await http().get(sc(B, `/orderbooks/${orderBookId}/requests`)).set(bearer(bGuest)).expect(200)).body.payload
        .total,
    ).toBe(requestsBefore);
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(bMember))
      .send({ status: 'merged', changes: [] })
      .expect(400);
    await http()
      .get(sc(B, `/orderbooks/${orderBookId}/requests/${requestId}`))
      .set(bearer(bGuest))
      .expect(200);
    await http()
      .get(sc(C, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(cOwner))
      .expect(404);
    await http()
      .get(sc(S, `/orderbooks/${orderBookId}/requests`))
      .set(bearer(sOwner))
      .expect(404);

    // The order-book batch form.
    const batch = await http()
      .post(sc(B, `/orderbooks/${orderBookId}/rows/batch-update`))
      .set(bearer(bMember))
      .send({
        rows: [
          {
            target: { row: 'o2' },
            values: [{ fieldId: 'quantity', value: { number: 4 } }],
            metadata: { reason: 'recount' },
          },
        ],
      })
      .expect(200);
    expect(batch.body.payload).toMatchObject({ merged: true, rowsUpdated: 1 });

    // Sync logs: written through the exported service, read per binding; a repeated idempotency key is skipped.
    const logs = t.app.get(SyncLogService);
    const entry = {
      organizationId: B.id,
      orderBookId,
      bindingId: publicBinding,
      connectionId: publicConn,
      catalogId,
      sourceRowId: 'r1',
      targetRowId: 'o2',
      eventType: 'row_updated',
    };
    const written = await logs.record(
      { ...entry, outcome: 'accepted', idempotencyKey: 'rev1:r1' },
      { ...entry, outcome: 'filtered', reason: 'outside receiver filter', idempotencyKey: 'rev1:r2' },
    );
    expect(written).toHaveLength(2);
    expect(await logs.record({ ...entry, outcome: 'accepted', idempotencyKey: 'rev1:r1' })).toHaveLength(0);
    await logs.record({
      organizationId: B.id,
      orderBookId,
      bindingId: null,
      outcome: 'error',
      reason: 'no binding',
    });
    const byBinding = await http()
      .get(sc(B, `/orderbooks/${orderBookId}/sync-logs?bindingId=${publicBinding}&pageSize=100`))
      .set(bearer(bGuest))
      .expect(200);
    // The binding's initial sync (catalog rows that existed when it became active) logged its own rows too.
    const written2 = byBinding.body.payload.items.filter((l: { targetRowId: string }) => l.targetRowId === 'o2');
    expect(written2).toHaveLength(2);
    expect(written2.map((l: { outcome: string }) => l.outcome).sort()).toEqual([
      'accepted',
      'filtered',
    ]);
    expect(
      (
        await http()
          .get(sc(B, `/orderbooks/${orderBookId}/sync-logs?outcome=filtered&pageSize=100`))
          .set(bearer(bGuest))
          .expect(200)
      ).body.payload.items.find((l: { targetRowId: string }) => l.targetRowId === 'o2').reason,
    ).toBe('outside receiver filter');
    expect(
      (
        await http()
          .get(sc(B, `/orderbooks/${orderBookId}/sync-logs?pageSize=100`))
          .set(bearer(bGuest))
          .expect(200)
      ).body.payload.items.filter(
        (l: { targetRowId: string | null; bindingId: string | null }) => l.targetRowId === 'o2' || l.bindingId === null,
      ),
    ).toHaveLength(3);
    await http()
      .get(sc(B, `/orderbooks/${orderBookId}/sync-logs?bindingId=nope`))
      .set(bearer(bGuest))
      .expect(400);
    await http()
      .get(sc(S, `/orderbooks/${orderBookId}/sync-logs`))
      .set(bearer(sOwner))
      .expect(404);
  });

  it('connectors: validation, scheduling, ownership', async () => {
    const target = (
      await http()
        .post(sc(B, '/catalogs'))
        .set(bearer(bOwner))
        .send({
          name: 'Resale',
          catalogType: 'product',
          fields: [
            { name: 'SKU', type: 'text' },
            { name: 'Qty', type: 'number' },
          ],
        })
        .expect(201)
    ).body.payload.id;
    const base = {
      name: 'Order book to resale',
      connectorType: 'orderbook_to_catalog',
      sourceDocId: orderBookId,
      sourceDocType: 'orderbook',
      targetDocId: target,
      targetDocType: 'catalog',
    };
    const config = {
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'sku' },
          { sourceFieldId: 'quantity', targetFieldId: 'qty' },
        ],
      },
      sourceFilter: { operator: 'AND', conditions: [{ fieldId: 'quantity', operator: 'gt', value: 0 }] },
      syncMode: 'scheduled',
      scheduleConfig: { cron: '*/5 * * * *', timezone: 'Europe/Paris' },
      conflictResolution: 'source_wins',
      bidirectional: true,
    };
    const created = await http()
      .post(sc(B, '/connectors'))
      .set(bearer(bOwner))
      .send({ ...base, orderbookToCatalogConfig: config })
      .expect(201);
    expect(created.body.payload).toMatchObject({
      connectorType: 'orderbook_to_catalog',
      syncMode: 'scheduled',
      status: 'active',
      orderbookToCatalogConfig: {
        bidirectional: true,
        scheduleConfig: { cron: '*/5 * * * *', timezone: 'Europe/Paris' },
      },
    });
    const realtime = await http()
      .post(sc(B, '/connectors'))
      .set(bearer(bOwner))
      .send({
        name: 'Clone',
        connectorType: 'catalog_clone',
        sourceDocId: target,
        targetDocId: (
          await http()
            .post(sc(B, '/catalogs'))
            .set(bearer(bOwner))
            .send({ name: 'Copy', catalogType: 'product', fields: [{ name: 'SKU', type: 'text' }] })
            .expect(201)
        ).body.payload.id,
        catalogCloneConfig: { fieldMapping: { rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku' }] } },
      })
      .expect(201);
    expect(realtime.body.payload).toMatchObject({
      syncMode: 'realtime',
      catalogCloneConfig: { conflictResolution: 'source_wins', bidirectional: false },
    });

    const invalid: Array<[Record<string, unknown>, string]> = [
      [
        {
          orderbookToCatalogConfig: {
            ...config,
            scheduleConfig: { cron: 'every five minutes', timezone: 'UTC' },
          },
        },
        'orderbookToCatalogConfig.scheduleConfig.cron',
      ],
      [
        {
          orderbookToCatalogConfig: {
            ...config,
            scheduleConfig: { cron: '*/5 * * * *', timezone: 'Mars/Olympus' },
          },
        },
        'orderbookToCatalogConfig.scheduleConfig.timezone',
      ],
      [
        { orderbookToCatalogConfig: { ...config, scheduleConfig: undefined } },
        'orderbookToCatalogConfig.scheduleConfig',
      ],
      [{ orderbookToCatalogConfig: { ...config, syncMode: 'hourly' } }, 'orderbookToCatalogConfig.syncMode'],
      [
        { orderbookToCatalogConfig: { ...config, conflictResolution: 'target_wins' } },
        'orderbookToCatalogConfig.conflictResolution',
      ],
      [
        {
          orderbookToCatalogConfig: {
            ...config,
            fieldMapping: { rules: [{ sourceFieldId: 'ghost', targetFieldId: 'sku' }] },
          },
        },
        'orderbookToCatalogConfig.fieldMapping.rules[0].sourceFieldId',
      ],
      [{ orderbookToCatalogConfig: config, catalogCloneConfig: config }, 'catalogCloneConfig'],
      [{}, 'orderbookToCatalogConfig'],
      [{ sourceDocType: 'catalog', orderbookToCatalogConfig: config }, 'sourceDocType'],
      [{ connectorType: 'catalog_merge', orderbookToCatalogConfig: config }, 'connectorType'],
    ];
    for (const [body, field] of invalid) {
      const res = await http()
        .post(sc(B, '/connectors'))
        .set(bearer(bOwner))
        .send({ ...base, ...body });
      expect([res.status, res.body.code, field]).toEqual([400, 'VALIDATION_ERROR', field]);
      expect(problemsOf(res.body).map((d: { field: string }) => d.field)).toContain(field);
    }
    await http()
      .post(sc(B, '/connectors'))
      .set(bearer(bMember))
      .send({ ...base, orderbookToCatalogConfig: config })
      .expect(403);
    // Documents of another organization are not found.
    await http()
      .post(sc(B, '/connectors'))
      .set(bearer(bOwner))
      .send({ ...base, targetDocId: catalogId, orderbookToCatalogConfig: config })
      .expect(404);

    const id = created.body.payload.id;
    expect((await http().get(sc(B, '/connectors')).set(bearer(bGuest)).expect(200)).body.payload.total).toBe(
      2,
    );
    expect(
      (
        await http()
          .post(sc(B, `/connectors/${id}/pause`))
          .set(bearer(bOwner))
          .expect(200)
      ).body.payload.status,
    ).toBe('paused');
    expect(
      (
        await http()
          .post(sc(B, `/connectors/${id}/resume`))
          .set(bearer(bOwner))
          .expect(200)
      ).body.payload.status,
    ).toBe('active');
    await http()
      .get(sc(C, `/connectors/${id}`))
      .set(bearer(cOwner))
      .expect(404);
    await http()
      .get(sc(S, `/connectors/${id}`))
      .set(bearer(sOwner))
      .expect(404);
    await http()
      .delete(sc(B, `/connectors/${id}`))
      .set(bearer(bMember))
      .expect(403);
    await http()
      .delete(sc(B, `/connectors/${id}`))
      .set(bearer(bOwner))
      .expect(200);
    await http()
      .get(sc(B, `/connectors/${id}`))
      .set(bearer(bOwner))
      .expect(404);
  });

  it('exported services: directory lookups and sync requests for a binding', async () => {
    const directory = t.app.get(SupplyChainDirectory);
    const catalog = await directory.catalog(catalogId);
    expect(catalog).toMatchObject({ id: catalogId, organizationId: S.id });
    expect((await directory.catalogByDocument(catalog?.documentId ?? ''))?.id).toBe(catalogId);
    // approvalConn is disabled, the rest active.
    expect((await directory.activeConnectionsForCatalog(catalogId)).map((c) => c.id).sort()).toEqual(
      [publicConn, whitelistConn].sort(),
    );
    await http()
      .post(sc(S, `/connections/${whitelistConn}/pause`))
      .set(bearer(sOwner))
      .expect(200);
    expect((await directory.activeConnectionsForCatalog(catalogId)).map((c) => c.id)).toEqual([publicConn]);
    await http()
      .post(sc(S, `/connections/${whitelistConn}/resume`))
      .set(bearer(sOwner))
      .expect(200);
    const active = await directory.activeBindingsForConnection(publicConn);
    expect(active.map((b) => b.orderBookId)).toEqual(expect.arrayContaining([cOrderBookId, orderBookId]));
    expect(active).toHaveLength(3); // plus the order book of the bind race
    expect(
      (await directory.activeBindingsForOrderBook(orderBookId)).every((b) => b.status === 'active'),
    ).toBe(true);
    const binding = await directory.binding(publicBinding);
    expect(binding?.fieldMapping.rules).toHaveLength(4);

    const requests = t.app.get(SyncRequestService);
    const created = await requests.createForBinding(binding as NonNullable<typeof binding>, {
      status: 'accepted',
      source: { catalogId, connectionId: publicConn },
      changes: [{ operation: 'create_row', rowId: 'p1', sourceRowId: 'r1', values: { sku: text('A-1') } }],
      productInfo: { sku: 'A-1' },
    });
    expect(created).toMatchObject({
      status: 'accepted',
      requestType: 'catalog_sync',
      bindingId: publicBinding,
      createdBy: bMember.id,
    });
    await http()
      .get(`${API}/doc/orderbook/${orderBookId}/data/p1?organizationId=${B.id}`)
      .set(bearer(bGuest))
      .expect(200);
    const waiting = await requests.createForBinding(binding as NonNullable<typeof binding>, {
      changes: [{ operation: 'update_row', rowId: 'p1', values: { quantity: { number: 2 } } }],
    });
    expect(waiting.status).toBe('pending');
    expect(
      (await requests.decideAsSystem(binding as NonNullable<typeof binding>, waiting.id, 'accept')).status,
    ).toBe('accepted');
    const listed = await http()
      .get(sc(B, `/orderbooks/${orderBookId}/requests?bindingId=${publicBinding}&pageSize=100`))
      .set(bearer(bGuest))
      .expect(200);
    // Besides the binding's initial sync (its source names catalog revisions), the two created here.
    expect(
      listed.body.payload.items.filter(
        (r: { source: { catalogRevisionIds?: string[] } }) => !r.source.catalogRevisionIds,
      ),
    ).toHaveLength(2);
  });

  it('catalog updates and lists', async () => {
    const updated = await http()
      .patch(sc(S, `/catalogs/${catalogId}`))
      .set(bearer(sOwner))
      .send({ name: 'Summer catalog', sharingEnabled: false })
      .expect(200);
    expect(updated.body.payload).toMatchObject({ name: 'Summer catalog', sharingEnabled: false });
    await http()
      .patch(sc(S, `/catalogs/${catalogId}`))
      .set(bearer(sMember))
      .send({ name: 'x' })
      .expect(403);
    await http()
      .post(sc(S, `/catalogs/${catalogId}/connections`))
      .set(bearer(sOwner))
      .send({ name: 'late' })
      .expect(409);
    // Existing connections keep working.
    expect(
      (
        await http()
          .get(sc(B, `/connections/${publicConn}`))
          .set(bearer(bOwner))
          .expect(200)
      ).body.payload.catalog.name,
    ).toBe('Summer catalog');
    expect((await http().get(sc(S, '/catalogs')).set(bearer(sGuest)).expect(200)).body.payload.total).toBe(2);
    expect((await http().get(sc(B, '/orderbooks')).set(bearer(bGuest)).expect(200)).body.payload.total).toBe(
      3,
    );
    expect((await http().get(sc(C, '/catalogs')).set(bearer(cOwner)).expect(200)).body.payload.total).toBe(0);
  });

  it('a batch appended to an open request is one write and, merged, one bulk event', async () => {
    const requestId = (
      await http()
        .post(`${API}/doc/catalog/${catalogId}/requests?organizationId=${S.id}`)
        .set(bearer(sOwner))
        .send({ title: 'batch draft' })
        .expect(201)
    ).body.payload.id as string;
    const batchPath = sc(S, `/catalogs/${catalogId}/rows/batch-update?requestId=${requestId}`);
    // A bad row names its path and appends nothing.
    const refused = await http()
      .post(batchPath)
      .set(bearer(sOwner))
      .send({
        rows: [
          { id: 'b0', operation: 'create', values: { sku: text('B-0') } },
          { id: 'b9', operation: 'create', values: { sku: { number: 1 } } },
        ],
      })
      .expect(400);
    expect(refused.body.details.field).toMatch(/^rows\[1\]/);
    await http()
      .post(batchPath)
      .set(bearer(sOwner))
      .send({
        rows: [
          { id: 'b1', operation: 'create', values: [{ fieldId: 'sku', value: text('B-1') }] },
          { id: 'b2', operation: 'create', values: { sku: text('B-2') } },
        ],
      })
      .expect(200);
    const detail = await http()
      .get(`${API}/doc/catalog/${catalogId}/requests/${requestId}?organizationId=${S.id}`)
      .set(bearer(sOwner))
      .expect(200);
    expect(detail.body.payload.changes.map((change: { targetId: string }) => change.targetId)).toEqual([
      'b1',
      'b2',
    ]);
    await http()
      .post(`${API}/doc/catalog/${catalogId}/requests/${requestId}/merge?organizationId=${S.id}`)
      .set(bearer(sOwner))
      .expect(200);
    const events = await t.dataSource.query(
      `SELECT event_type AS "eventType" FROM outbox
        WHERE doc_type = 'catalog' AND doc_id = $1 AND payload->>'requestId' = $2 AND event_type LIKE 'data_%'`,
      [catalogId, requestId],
    );
    expect(events.map((event: { eventType: string }) => event.eventType)).toEqual(['data_bulk_operation']);

    // An empty requestId is refused on every catalog row write (the catalog routes take a UUID), nothing merged at once.
    const [{ version }] = await t.dataSource.query(
      `SELECT version::text AS version FROM documents WHERE doc_type = 'catalog' AND doc_id = $1`,
      [catalogId],
    );
    const empty = [
      http()
        .post(sc(S, `/catalogs/${catalogId}/rows/batch-update?requestId=`))
        .send({ rows: [{ id: 'b3', operation: 'create', values: { sku: text('B-3') } }] }),
      http().patch(sc(S, `/catalogs/${catalogId}/rows/b1?requestId=`)).send({ values: { sku: text('B-1b') } }),
      http().delete(sc(S, `/catalogs/${catalogId}/rows/b1?requestId=`)),
    ];
    for (const write of empty) {
      const res = await write.set(bearer(sOwner));
      expect({ status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'requestId',
      });
    }
    const [after] = await t.dataSource.query(
      `SELECT version::text AS version FROM documents WHERE doc_type = 'catalog' AND doc_id = $1`,
      [catalogId],
    );
    expect(after.version).toBe(version);
  });

  it('a catalog whose document is deleted through the document API leaves the catalog routes with it', async () => {
    const created = await http()
      .post(sc(S, '/catalogs'))
      .set(bearer(sOwner))
      .send({ name: 'Short-lived', catalogType: 'product', fields: [{ name: 'SKU', type: 'text' }] })
      .expect(201);
    const id = created.body.payload.id as string;
    const before = (await http().get(sc(S, '/catalogs')).set(bearer(sOwner)).expect(200)).body.payload
      .total as number;
    await http().delete(`${API}/doc/catalog/${id}?organizationId=${S.id}`).set(bearer(sOwner)).expect(200);
    await http()
      .get(sc(S, `/catalogs/${id}`))
      .set(bearer(sOwner))
      .expect(404);
    await http()
      .get(sc(S, `/catalogs/${id}/fields`))
      .set(bearer(sOwner))
      .expect(404);
    expect((await http().get(sc(S, '/catalogs')).set(bearer(sOwner)).expect(200)).body.payload.total).toBe(
      before - 1,
    );
  });

  it('delegated credentials need the matching scope', async () => {
    const key = await http()
      .post(`${API}/api-keys`)
      .set(bearer(bOwner))
      .send({ name: 'reader', scopes: ['doc:read'] })
      .expect(201);
    const apiKey = key.body.payload.key as string;
    await http()
      .get(sc(B, `/orderbooks/${orderBookId}`))
      .set('X-API-Key', apiKey)
      .expect(200);
    expect(
      (await http().post(sc(B, '/orderbooks')).set('X-API-Key', apiKey).send({ name: 'x' }).expect(403)).body
        .code,
    ).toBe('FORBIDDEN');
    await http()
      .post(sc(B, `/orderbooks/${orderBookId}/rows/batch-update`))
      .set('X-API-Key', apiKey)
      .send({ rows: [{ values: [] }] })
      .expect(403);
  });

  it('PATCH takes a catalog and a connection as read: identity keys must match, read-only keys are ignored', async () => {
    const catalog = (
      await http()
        .post(sc(S, '/catalogs'))
        .set(bearer(sOwner))
        .send({
          name: 'Echo catalog',
          catalogType: 'product',
          fields: [
            { name: 'SKU', type: 'text', description: 'Stock keeping unit' },
            { name: 'Colour', type: 'single_select', selectOptions: [{ label: 'Red' }] },
          ],
        })
        .expect(201)
    ).body.payload;
    const readCatalog = (await http().get(sc(S, `/catalogs/${catalog.id}`)).set(bearer(sOwner)).expect(200)).body
      .payload;
    const patchedCatalog = await http()
      .patch(sc(S, `/catalogs/${catalog.id}`))
      .set(bearer(sOwner))
      .send({ ...readCatalog, name: 'Echo catalog 2', id: readCatalog.id.toUpperCase(), rowCount: 7, version: 99 })
      .expect(200);
    expect(patchedCatalog.body.payload).toMatchObject({
      ...readCatalog,
      name: 'Echo catalog 2',
      updatedAt: expect.any(String),
    });
    const otherFields = readCatalog.fields.map((field: { name: string }, i: number) =>
      i === 0 ? { ...field, name: 'Renamed' } : field,
    );
    for (const [key, value] of [
      ['id', catalogId],
      ['docType', 'orderbook'],
      ['fields', otherFields],
    ] as const) {
      const refused = await http()
        .patch(sc(S, `/catalogs/${catalog.id}`))
        .set(bearer(sOwner))
        .send({ ...readCatalog, name: 'Moved', [key]: value })
        .expect(400);
      expect(refused.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(refused.body)).toEqual([{ field: key, reason: expect.any(String) }]);
      expect(problemsOf(refused.body)[0].reason).not.toContain('should not exist');
    }
    const catalogNow = (await http().get(sc(S, `/catalogs/${catalog.id}`)).set(bearer(sOwner)).expect(200)).body
      .payload;
    expect(catalogNow).toMatchObject({ name: 'Echo catalog 2', fields: readCatalog.fields });

    const connection = (
      await http()
        .post(sc(S, '/connections'))
        .set(bearer(sOwner))
        .send({ name: 'Echo', sourceCatalogId: catalog.id, accessControl: 'public' })
        .expect(201)
    ).body.payload;
    const readConnection = (
      await http().get(sc(S, `/connections/${connection.id}`)).set(bearer(sOwner)).expect(200)
    ).body.payload;
    // `status` is read-only here (pause, resume and disable change it): a different value is ignored.
    const patchedConnection = await http()
      .patch(sc(S, `/connections/${connection.id}`))
      .set(bearer(sOwner))
      .send({ ...readConnection, name: 'Echo 2', status: 'paused', activeBindings: 5 })
      .expect(200);
    expect(patchedConnection.body.payload).toMatchObject({
      ...readConnection,
      name: 'Echo 2',
      status: 'active',
      updatedAt: expect.any(String),
    });
    for (const [key, value] of [
      ['id', publicConn],
      ['sourceCatalogId', catalogId],
    ] as const) {
      const refused = await http()
        .patch(sc(S, `/connections/${connection.id}`))
        .set(bearer(sOwner))
        .send({ ...readConnection, name: 'Moved', [key]: value })
        .expect(400);
      expect(refused.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(refused.body)).toEqual([{ field: key, reason: expect.any(String) }]);
      expect(problemsOf(refused.body)[0].reason).not.toContain('should not exist');
    }
    const connectionNow = (
      await http().get(sc(S, `/connections/${connection.id}`)).set(bearer(sOwner)).expect(200)
    ).body.payload;
    expect(connectionNow).toMatchObject({ name: 'Echo 2', status: 'active', sourceCatalogId: catalog.id });
  });
});
