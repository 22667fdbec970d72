import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser, seedRows, valueOf } from './documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'q', name: 'Q', type: 'number' },
  { id: 'note', name: 'Note', type: 'text' },
];
const PROPERTIES = [{ id: 'tot', name: 'Tot', type: 'number' }];
const ROW_IDS = Array.from({ length: 10 }, (_, i) => `r${i}`);

type Op = 'bulk' | 'delete' | 'put' | 'metadata';

/** The ids of the `metadata-changed` conflict: the one refusal a rows-only write may meet here (docs/documents.md). */
function isMetadataChanged(res: request.Response): boolean {
  return res.status === 409 && res.body.code === 'CONFLICT' && JSON.stringify(res.body.payload?.conflicts ?? []).includes('metadata-changed');
}

/**
 * Writers that lock the document row and then rows (metadata, bulk writes with a property, merges) and rows-only
 * writers (row writes and deletes, which lock their rows and the document row last) met in opposite orders and
 * deadlocked: PostgreSQL broke the cycle after `deadlock_timeout` and one of them answered 409 `CONFLICT` "concurrent
 * change, retry". docs/documents.md ("Locking"): writers never deadlock on each other.
 */
describe('documents: writers that lock the document and rows-only writers never deadlock', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('runs bulk writes with a property, row deletes, row writes and a metadata PUT at once: each answers its own outcome, the history stays whole', async () => {
    for (let round = 0; round < 5; round += 1) {
      const doc: DocHandle = await createDocument(t.http, owner, { fields: FIELDS, properties: PROPERTIES });
      await seedRows(
        t.dataSource,
        doc,
        ROW_IDS.map((id, i) => ({ id, values: { name: `n${i}`, q: 0 } })),
      );
      const send = (op: Op, req: request.Test): Promise<{ op: Op; res: request.Response }> => req.then((res) => ({ op, res }));
      const writes = [
        // Document lock first (a property target), then every row.
        ...Array.from({ length: 6 }, (_, k) =>
          send(
            'bulk',
            request(t.http)
              .post(`${doc.path}/data/bulk`)
              .set(bearer(owner))
              .send([
                ...ROW_IDS.slice(3).map((row) => ({ target: { row, field: 'q' }, value: { number: k + 1 } })),
                { target: { property: 'tot' }, value: { number: k + 1 } },
              ]),
          ),
        ),
        // Rows-only: each locks its row, then the document row when its revision is numbered.
        ...ROW_IDS.slice(0, 3).map((row) => send('delete', request(t.http).delete(`${doc.path}/data/${row}`).set(bearer(owner)))),
        // (The rows of the bulks too: their `note` only, never `q`.)
        ...ROW_IDS.slice(7).map((row) => send('put', request(t.http).put(`${doc.path}/data/${row}`).set(bearer(owner)).send({ values: { note: `round ${round}` } }))),
        // Document lock first, then every row (the deleted field's values are taken out of them).
        send('metadata', request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields: FIELDS.slice(1), properties: PROPERTIES })),
      ];
      const results = await Promise.all(writes);

      const unexpected = results.filter(({ op, res }) => {
        if (res.status === 200) {
          return false;
        }
        // A row write validated against the fields as they were before the metadata merge is refused, nothing written.
        return !((op === 'delete' || op === 'put') && isMetadataChanged(res));
      });
      expect(unexpected.map(({ op, res }) => ({ op, status: res.status, code: res.body.code, details: res.body.details }))).toEqual([]);

      // One revision per successful write after the creation, numbered without gaps, each linked to the one before.
      const succeeded = results.filter(({ res }) => res.status === 200).length;
      const history = await t.dataSource.query<Array<{ id: string; version: string; previous_revision_id: string | null }>>(
        `SELECT v.id, v.version, v.previous_revision_id FROM revisions v JOIN documents d ON d.id = v.document_id
          WHERE d.doc_id = $1 ORDER BY v.version`,
        [doc.docId],
      );
      expect(history.map((revision) => Number(revision.version))).toEqual(Array.from({ length: 1 + succeeded }, (_, i) => i + 1));
      history.forEach((revision, i) => expect(revision.previous_revision_id).toBe(i === 0 ? null : history[i - 1]?.id));
      const read = await request(t.http).get(doc.path).set(bearer(owner)).expect(200);
      expect(read.body.payload.document.version).toBe(history.length);

      // The bulks applied whole and in one order: the remaining rows and the property all hold the last one's number.
      const deleted = results.filter(({ op, res }) => op === 'delete' && res.status === 200).length;
      const rows = await request(t.http).get(`${doc.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
      expect(rows.body.payload.total).toBe(ROW_IDS.length - deleted);
      const props = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
      const tot = JSON.stringify(props.body.payload.properties.find((entry: { fieldId: string }) => entry.fieldId === 'tot')?.value);
      const bulkRows = rows.body.payload.items.filter((row: { id: string }) => ROW_IDS.slice(3).includes(row.id));
      expect(new Set(bulkRows.map((row: Parameters<typeof valueOf>[0]) => JSON.stringify(valueOf(row, 'q'))))).toEqual(new Set([tot]));
      // The metadata merge took the deleted field's values out of every row.
      expect(rows.body.payload.items.filter((row: Parameters<typeof valueOf>[0]) => valueOf(row, 'name') !== undefined)).toEqual([]);
    }
  });

  it("deletes rows other documents' relations name while those documents' rows are linked to them: no deadlock", async () => {
    for (let round = 0; round < 4; round += 1) {
      const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }, { id: 'weight', name: 'Weight', type: 'number' }] });
      // With a rollup (every other round), a deletion also recomputes the kits that read the part.
      const rollup = round % 2 === 1 ? [{ id: 'mass', name: 'Mass', type: 'rollup', rollup: { relationFieldId: 'parts', targetFieldId: 'weight', agg: 'sum' } }] : [];
      const kits = await createDocument(t.http, owner, { docType: 'kits', fields: [{ id: 'parts', name: 'Parts', type: 'relation' }, ...rollup] });
      const ids = Array.from({ length: 4 }, (_, i) => `p${i}`);
      for (const id of ids) {
        await createRow(t.http, owner, parts, { id, values: { name: id, weight: 1 } });
      }
      const ref = (rowId: string): Record<string, string> => ({ docType: parts.docType, docId: parts.docId, rowId });
      // Each part is named by a kit already: deleting it takes the reference out of the kits document.
      await createRow(t.http, owner, kits, { id: 'holder', values: { parts: ids.map(ref) } });
      for (const id of ids) {
        await createRow(t.http, owner, kits, { id: `k-${id}`, values: { parts: [] } });
      }
      // A kit write pointing at a part waits for that part's deletion (the target is held FOR KEY SHARE), while the
      // deletion goes on into the kits document to drop the holder's reference.
      const results = await Promise.all([
        ...ids.map((id) => request(t.http).delete(`${parts.path}/data/${id}`).set(bearer(owner))),
        ...ids.map((id) => request(t.http).put(`${kits.path}/data/k-${id}`).set(bearer(owner)).send({ values: { parts: [ref(id)] } })),
      ]);
      const deletes = results.slice(0, ids.length);
      const links = results.slice(ids.length);
      expect(deletes.map((res) => ({ status: res.status, code: res.body.code, details: res.body.details }))).toEqual(ids.map(() => ({ status: 200, code: undefined, details: undefined })));
      // A link either committed first (its reference then dropped by the deletion) or found the part gone.
      expect(links.filter((res) => !(res.status === 200 || (res.status === 400 && res.body.code === 'VALIDATION_ERROR'))).map((res) => res.body)).toEqual([]);
      const list = await request(t.http).get(`${kits.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
      expect(list.body.payload.items.filter((row: Parameters<typeof valueOf>[0]) => JSON.stringify(valueOf(row, 'parts') ?? null).includes('rowId'))).toEqual([]);
      if (rollup.length > 0) {
        expect(list.body.payload.items.map((row: Parameters<typeof valueOf>[0]) => valueOf(row, 'mass'))).toEqual(list.body.payload.items.map(() => ({ number: 0 })));
      }
    }
  });

  it("recomputes another document's rollups while that document's own rows are written: no write deadlocks, every rollup right", async () => {
    for (let round = 0; round < 4; round += 1) {
      const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }, { id: 'weight', name: 'Weight', type: 'number' }] });
      const kits = await createDocument(t.http, owner, {
        docType: 'kits',
        fields: [
          { id: 'parts', name: 'Parts', type: 'relation' },
          { id: 'note', name: 'Note', type: 'text' },
          { id: 'mass', name: 'Mass', type: 'rollup', rollup: { relationFieldId: 'parts', targetFieldId: 'weight', agg: 'sum' } },
        ],
      });
      for (let i = 0; i < 6; i += 1) {
        await createRow(t.http, owner, parts, { id: `p${i}`, values: { name: `p${i}`, weight: 1 } });
      }
      const refs = Array.from({ length: 6 }, (_, i) => ({ docType: parts.docType, docId: parts.docId, rowId: `p${i}` }));
      for (let k = 0; k < 6; k += 1) {
        await createRow(t.http, owner, kits, { id: `k${k}`, values: { parts: refs } });
      }
      // A part write recomputes every kit (share-locking the kits document, then its rows) while each kit's own
      // write holds its row and takes the kits document row to number its revision.
      const results = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => request(t.http).put(`${parts.path}/data/p${i}`).set(bearer(owner)).send({ values: { weight: 10 + i } })),
        ...Array.from({ length: 6 }, (_, k) => request(t.http).put(`${kits.path}/data/k${k}`).set(bearer(owner)).send({ values: { note: `round ${round}` } })),
      ]);
      expect(results.filter((res) => res.status !== 200).map((res) => ({ status: res.status, code: res.body.code, details: res.body.details }))).toEqual([]);
      const list = await request(t.http).get(`${kits.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
      expect(list.body.payload.items.map((row: Parameters<typeof valueOf>[0]) => valueOf(row, 'mass'))).toEqual(Array(6).fill({ number: 10 + 11 + 12 + 13 + 14 + 15 }));
    }
  });

  it("merges a request that updates and deletes parts while the kits naming them are written: no deadlock", async () => {
    const results: request.Response[] = [];
    for (let round = 0; round < 4; round += 1) {
      const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }, { id: 'weight', name: 'Weight', type: 'number' }] });
      const kits = await createDocument(t.http, owner, {
        docType: 'kits',
        fields: [
          { id: 'parts', name: 'Parts', type: 'relation' },
          { id: 'note', name: 'Note', type: 'text' },
          { id: 'mass', name: 'Mass', type: 'rollup', rollup: { relationFieldId: 'parts', targetFieldId: 'weight', agg: 'sum' } },
        ],
      });
      for (const id of ['p0', 'p1']) {
        await createRow(t.http, owner, parts, { id, values: { name: id, weight: 1 } });
      }
      const ref = (rowId: string): Record<string, string> => ({ docType: parts.docType, docId: parts.docId, rowId });
      for (let i = 0; i < 6; i += 1) {
        await createRow(t.http, owner, kits, { id: `h${i}`, values: { parts: [ref('p0')] } });
      }
      for (let i = 0; i < 3; i += 1) {
        await createRow(t.http, owner, kits, { id: `k${i}`, values: { parts: [ref('p1')] } });
      }
      // The merge recomputes the kits reading p1, then takes p0 out of the kits naming it; meanwhile those kits are
      // written. The merge once share-locked the kits document row between the two, which each kit write needs last.
      const opened = await request(t.http).post(`${parts.path}/requests`).set(bearer(owner)).send({ title: 'r' }).expect(201);
      const requestId = opened.body.payload.id as string;
      await request(t.http).put(`${parts.path}/data/p1?requestId=${requestId}`).set(bearer(owner)).send({ values: { weight: 9 } }).expect(200);
      await request(t.http).delete(`${parts.path}/data/p0?requestId=${requestId}`).set(bearer(owner)).expect(200);
      let stop = false;
      const writer = async (i: number): Promise<void> => {
        for (let n = 0; !stop && n < 15; n += 1) {
          results.push(await request(t.http).put(`${kits.path}/data/h${i}`).set(bearer(owner)).send({ values: { note: `n${n}` } }));
        }
      };
      const writers = Array.from({ length: 6 }, (_, i) => writer(i));
      await new Promise((resolve) => setTimeout(resolve, 30 + round * 10));
      results.push(await request(t.http).post(`${parts.path}/requests/${requestId}/merge`).set(bearer(owner)));
      stop = true;
      await Promise.all(writers);
      const list = await request(t.http).get(`${kits.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
      const mass = Object.fromEntries(list.body.payload.items.map((row: Parameters<typeof valueOf>[0] & { id: string }) => [row.id, valueOf(row, 'mass')]));
      expect(mass).toMatchObject({ k0: { number: 9 }, k1: { number: 9 }, k2: { number: 9 } });
    }
    expect(results.filter((res) => res.status !== 200).map((res) => ({ status: res.status, code: res.body.code, details: res.body.details }))).toEqual([]);
  });

  it('deletes parts while kits written under the kits document lock (a unique or auto_number field) are linked to them: no deadlock', async () => {
    for (let round = 0; round < 4; round += 1) {
      const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
      // `unique` or `auto_number`: a kit write takes the kits document's write lock exclusively, then points at a part
      // (FOR KEY SHARE), while the part's deletion goes on into the kits document to drop the holder's reference.
      const locking = round % 2 === 0 ? { id: 'code', name: 'Code', type: 'text', unique: true } : { id: 'n', name: 'N', type: 'auto_number' };
      const kits = await createDocument(t.http, owner, { docType: 'kits', fields: [{ id: 'parts', name: 'Parts', type: 'relation' }, locking] });
      const ids = Array.from({ length: 4 }, (_, i) => `p${i}`);
      for (const id of ids) {
        await createRow(t.http, owner, parts, { id, values: { name: id } });
      }
      const ref = (rowId: string): Record<string, string> => ({ docType: parts.docType, docId: parts.docId, rowId });
      // Each part is named by a kit already: deleting it takes the reference out of the kits document.
      await createRow(t.http, owner, kits, { id: 'holder', values: { parts: ids.map(ref) } });
      for (const id of ids) {
        await createRow(t.http, owner, kits, { id: `k-${id}`, values: { parts: [] } });
      }
      const results = await Promise.all([
        ...ids.map((id) => request(t.http).delete(`${parts.path}/data/${id}`).set(bearer(owner))),
        ...ids.map((id) => request(t.http).put(`${kits.path}/data/k-${id}`).set(bearer(owner)).send({ values: { parts: [ref(id)], ...(round % 2 === 0 ? { code: `c-${id}` } : {}) } })),
      ]);
      const deletes = results.slice(0, ids.length);
      const links = results.slice(ids.length);
      expect(deletes.map((res) => ({ status: res.status, code: res.body.code, details: res.body.details }))).toEqual(ids.map(() => ({ status: 200, code: undefined, details: undefined })));
      // A link either committed first (its reference then dropped by the deletion) or found the part gone.
      expect(links.filter((res) => !(res.status === 200 || (res.status === 400 && res.body.code === 'VALIDATION_ERROR'))).map((res) => ({ status: res.status, code: res.body.code, details: res.body.details }))).toEqual([]);
      const list = await request(t.http).get(`${kits.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
      expect(list.body.payload.items.filter((row: Parameters<typeof valueOf>[0]) => JSON.stringify(valueOf(row, 'parts') ?? null).includes('rowId'))).toEqual([]);
    }
  });

  it('deletes parts while a request merge or a bulk write with a property target links kits to them: no deadlock', async () => {
    const concurrentChange = (res: request.Response): boolean => res.status === 409 && JSON.stringify(res.body.details ?? null).includes('concurrent change');
    for (let round = 0; round < 4; round += 1) {
      const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
      const kits = await createDocument(t.http, owner, { docType: 'kits', fields: [{ id: 'parts', name: 'Parts', type: 'relation' }], properties: [{ id: 'tot', name: 'Tot', type: 'number' }] });
      const ids = Array.from({ length: 4 }, (_, i) => `p${i}`);
      for (const id of ids) {
        await createRow(t.http, owner, parts, { id, values: { name: id } });
      }
      const ref = (rowId: string): Record<string, string> => ({ docType: parts.docType, docId: parts.docId, rowId });
      await createRow(t.http, owner, kits, { id: 'holder', values: { parts: ids.map(ref) } });
      for (const id of ids) {
        await createRow(t.http, owner, kits, { id: `k-${id}`, values: { parts: [] } });
      }
      // Both lock the kits document first (its write lock exclusively), then point kits at the parts.
      let kitWrite: Promise<request.Response>;
      if (round % 2 === 0) {
        const opened = await request(t.http).post(`${kits.path}/requests`).set(bearer(owner)).send({ title: 'r' }).expect(201);
        const requestId = opened.body.payload.id as string;
        for (const id of ids) {
          await request(t.http).put(`${kits.path}/data/k-${id}?requestId=${requestId}`).set(bearer(owner)).send({ values: { parts: [ref(id)] } }).expect(200);
        }
        kitWrite = request(t.http).post(`${kits.path}/requests/${requestId}/merge`).set(bearer(owner)).then((res) => res);
      } else {
        kitWrite = request(t.http)
          .post(`${kits.path}/data/bulk`)
          .set(bearer(owner))
          .send([...ids.map((id) => ({ target: { row: `k-${id}`, field: 'parts' }, value: [ref(id)] })), { target: { property: 'tot' }, value: { number: round } }])
          .then((res) => res);
      }
      const [kit, ...deletes] = await Promise.all([kitWrite, ...ids.map((id) => request(t.http).delete(`${parts.path}/data/${id}`).set(bearer(owner)).then((res) => res))]);
      expect(deletes.map((res) => ({ status: res.status, code: res.body.code, details: res.body.details }))).toEqual(ids.map(() => ({ status: 200, code: undefined, details: undefined })));
      // The kits' write committed first (its references then dropped) or was refused for naming a part gone: never a deadlock.
      expect(concurrentChange(kit) ? { status: kit.status, body: kit.body } : null).toBeNull();
      const list = await request(t.http).get(`${kits.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
      expect(list.body.payload.items.filter((row: Parameters<typeof valueOf>[0]) => JSON.stringify(valueOf(row, 'parts') ?? null).includes('rowId'))).toEqual([]);
    }
  });
});
