import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

interface Footprint {
  version: string;
  revisions: number;
  events: number;
  requests: number;
}

interface OutboxEvent {
  event_type: string;
  payload: Record<string, unknown>;
}

/**
 * The request lifecycle of spec section 3 and its events (spec 6.2): every refused transition answers the documented
 * error (docs/documents.md, "Decisions where the spec is silent") and leaves nothing written — no revision, no event,
 * no request, the document's version unchanged — and every allowed one records exactly the events 6.2 names.
 */
describe('documents: request lifecycle and its events', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'base', values: { name: 'Base', qty: 1 } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function footprint(): Promise<Footprint> {
    const [row] = await t.dataSource.query<Footprint[]>(
      `SELECT d.version::text AS version,
              (SELECT count(*)::int FROM revisions r WHERE r.document_id = d.id) AS revisions,
              (SELECT count(*)::int FROM outbox o WHERE o.doc_id = d.doc_id) AS events,
              (SELECT count(*)::int FROM requests q WHERE q.document_id = d.id) AS requests
         FROM documents d WHERE d.doc_type = $1 AND d.doc_id = $2 AND d.deleted_at IS NULL`,
      [doc.docType, doc.docId],
    );
    return row as Footprint;
  }

  async function eventsOf(requestId: string): Promise<OutboxEvent[]> {
    return t.dataSource.query<OutboxEvent[]>(`SELECT event_type, payload FROM outbox WHERE doc_id = $1 AND payload->>'requestId' = $2 ORDER BY seq`, [
      doc.docId,
      requestId,
    ]);
  }

  async function openRequest(qty: number): Promise<string> {
    const res = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: `Set ${qty}`, changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'base' }, newValue: { qty } }] })
      .expect(201);
    return res.body.payload.id as string;
  }

  it('refuses a write naming an empty requestId with NOT_FOUND instead of merging it at once', async () => {
    const before = await footprint();
    const writes: [string, request.Test][] = [
      ['POST /data', request(t.http).post(`${doc.path}/data?requestId=`).send({ id: 'empty-req', values: { name: 'Nope' } })],
      ['PUT /data/{rowId}', request(t.http).put(`${doc.path}/data/base?requestId=`).send({ values: { qty: 99 } })],
      ['DELETE /data/{rowId}', request(t.http).delete(`${doc.path}/data/base?requestId=`)],
      ['POST /data/bulk', request(t.http).post(`${doc.path}/data/bulk?requestId=`).send([{ target: { row: 'base', field: 'qty' }, value: 98 }])],
      ['PATCH /properties', request(t.http).patch(`${doc.path}/properties?requestId=`).send({ properties: {} })],
      ['PUT /settings', request(t.http).put(`${doc.path}/settings?requestId=`).send({ notifications: { onMerge: true } })],
    ];
    for (const [route, write] of writes) {
      const res = await write.set(bearer(owner));
      expect({ route, status: res.status, code: res.body.code, details: res.body.details }).toEqual({
        route,
        status: 404,
        code: 'NOT_FOUND',
        details: { field: 'requestId', reason: 'request not found' },
      });
    }
    // `apply` still cannot be combined with a requestId, empty or not.
    const applied = await request(t.http).post(`${doc.path}/data?requestId=&apply=true`).set(bearer(owner)).send({ values: { name: 'Nope' } }).expect(400);
    expect(applied.body.details).toMatchObject({ field: 'apply' });
    expect(await footprint()).toEqual(before);
    const row = await request(t.http).get(`${doc.path}/data/base`).set(bearer(owner)).expect(200);
    expect(row.body.payload.version).toBe(1);
    // Reads apply the same rule: an empty requestId is a malformed one, never the committed document.
    for (const path of ['data', 'data/base', 'metadata', 'properties']) {
      const read = await request(t.http).get(`${doc.path}/${path}?requestId=`).set(bearer(owner));
      expect({ path, status: read.status, code: read.body.code }).toEqual({ path, status: 404, code: 'NOT_FOUND' });
    }
  });

  it('refuses a request title made only of whitespace (and trims the others) and a row-update without newValue', async () => {
    const before = await footprint();
    const blank = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: '   ' }).expect(400);
    expect(blank.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'title' } });
    expect(await footprint()).toEqual(before);
    // A row-update without newValue would record a change that changes nothing.
    for (const change of [
      { type: 'row-update', target: { kind: 'row', rowId: 'base' } },
      { type: 'row-update', target: { kind: 'row', rowId: 'base' }, newValue: null },
    ]) {
      const res = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'No values', changes: [change] }).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'changes[0].newValue' } });
    }
    expect(await footprint()).toEqual(before);
    const padded = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: '  Spring prices ' }).expect(201);
    expect(padded.body.payload.title).toBe('Spring prices');
  });

  it('refuses every transition out of merged and closed with INVALID_STATE, writing nothing', async () => {
    const merged = await openRequest(2);
    await request(t.http).post(`${doc.path}/requests/${merged}/merge`).set(bearer(owner)).expect(200);
    const closed = await openRequest(3);
    await request(t.http).post(`${doc.path}/requests/${closed}/close`).set(bearer(owner)).expect(200);
    const before = await footprint();
    const refused: [string, request.Test][] = [
      ['merge merged', request(t.http).post(`${doc.path}/requests/${merged}/merge`)],
      ['close merged', request(t.http).post(`${doc.path}/requests/${merged}/close`)],
      ['reopen merged', request(t.http).post(`${doc.path}/requests/${merged}/reopen`)],
      ['append to merged', request(t.http).put(`${doc.path}/data/base?requestId=${merged}`).send({ values: { qty: 4 } })],
      ['bulk into merged', request(t.http).post(`${doc.path}/data/bulk?requestId=${merged}`).send([{ target: { row: 'base', field: 'qty' }, value: 4 }])],
      ['merge closed', request(t.http).post(`${doc.path}/requests/${closed}/merge`)],
      ['close closed', request(t.http).post(`${doc.path}/requests/${closed}/close`)],
      ['append to closed', request(t.http).post(`${doc.path}/data?requestId=${closed}`).send({ values: { name: 'Late' } })],
      ['properties into closed', request(t.http).patch(`${doc.path}/properties?requestId=${closed}`).send({ properties: {} })],
    ];
    for (const [label, call] of refused) {
      const res = await call.set(bearer(owner));
      expect({ label, status: res.status, code: res.body.code }).toEqual({ label, status: 409, code: 'INVALID_STATE' });
    }
    expect(await footprint()).toEqual(before);
    const read = await request(t.http).get(`${doc.path}/requests/${closed}`).set(bearer(owner)).expect(200);
    expect(read.body.payload).toMatchObject({ status: 'closed', changeCount: 1, generatedRevisionId: null, mergedAt: null, mergedBy: null });
  });

  it('merges a request raced from several clients once: one revision, one request_merged', async () => {
    const id = await openRequest(5);
    const before = await footprint();
    const race = await Promise.all([1, 2, 3].map(() => request(t.http).post(`${doc.path}/requests/${id}/merge`).set(bearer(owner))));
    expect(race.map((res) => res.status).sort()).toEqual([200, 409, 409]);
    expect(race.filter((res) => res.status === 409).map((res) => res.body.code)).toEqual(['INVALID_STATE', 'INVALID_STATE']);
    const after = await footprint();
    expect(after.revisions).toBe(before.revisions + 1);
    expect(Number(after.version)).toBe(Number(before.version) + 1);
    const winner = race.find((res) => res.status === 200)?.body.payload;
    const events = await eventsOf(id);
    expect(events.map((event) => event.event_type)).toEqual(['request_created', 'request_merged', 'data_row_updated', 'revision_created']);
    expect(events[1]?.payload).toEqual({
      requestId: id,
      title: 'Set 5',
      author: owner.id,
      mergedBy: owner.id,
      mergedAt: winner.mergedAt,
      revisionId: winner.generatedRevisionId,
      changesApplied: 1,
    });
  });

  it('lets one of a racing merge and close win; the loser records nothing', async () => {
    const id = await openRequest(6);
    const [merge, close] = await Promise.all([
      request(t.http).post(`${doc.path}/requests/${id}/merge`).set(bearer(owner)),
      request(t.http).post(`${doc.path}/requests/${id}/close`).set(bearer(owner)),
    ]);
    expect([merge.status, close.status].sort()).toEqual([200, 409]);
    const status = (await request(t.http).get(`${doc.path}/requests/${id}`).set(bearer(owner)).expect(200)).body.payload.status;
    const types = (await eventsOf(id)).map((event) => event.event_type);
    if (status === 'merged') {
      expect(types).toEqual(['request_created', 'request_merged', 'data_row_updated', 'revision_created']);
    } else {
      expect(status).toBe('closed');
      expect(types).toEqual(['request_created', 'request_closed']);
    }
  });

  it('reverts a revert; a second revert of the same revision conflicts without a revision', async () => {
    const write = await request(t.http).put(`${doc.path}/data/base`).set(bearer(owner)).send({ values: { qty: 100 } }).expect(200);
    const revisionId = write.body.payload.request.revisionId as string;
    const first = await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(200);
    const revert = first.body.payload;
    expect((await eventsOf(revert.request.id)).map((event) => event.event_type)).toEqual([
      'request_created',
      'request_merged',
      'data_row_updated',
      'revision_created',
      'revision_reverted',
    ]);

    const before = await footprint();
    const again = await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(409);
    expect(again.body.code).toBe('CONFLICT');
    expect(again.body.payload.conflicts[0]).toMatchObject({ type: 'row-changed', rowId: 'base' });
    // Documented: the revert request stays open (request_created), nothing else was written.
    const after = await footprint();
    expect(after).toEqual({ ...before, events: before.events + 1, requests: before.requests + 1 });
    expect((await eventsOf(again.body.payload.requestId)).map((event) => event.event_type)).toEqual(['request_created']);

    const undone = await request(t.http).post(`${doc.path}/revisions/${revert.revision.id}/revert`).set(bearer(owner)).expect(200);
    const reverted = (await eventsOf(undone.body.payload.request.id)).find((event) => event.event_type === 'revision_reverted');
    expect(reverted?.payload).toMatchObject({ revertedRevisionId: revert.revision.id, revertedVersion: revert.revision.version });
    const row = await request(t.http).get(`${doc.path}/data/base`).set(bearer(owner)).expect(200);
    expect(row.body.payload.values).toContainEqual({ fieldId: 'qty', value: { number: 100 } });
  });
});
