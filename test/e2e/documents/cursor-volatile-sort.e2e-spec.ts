import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle, newUser, seedRows } from './documents.fixtures.js';

/**
 * Cursor paging sorted by a NOW() formula (docs/documents.md "Queries and indexes": keyset cursors never shift or
 * repeat later pages). Such a formula is computed by every query, so a cursor holding the value of page 1 compared
 * with the value at page 2 moved under it: `sort=now:asc` answered the first rows again on every page (a client
 * never reached the end) and `sort=now:desc` ended after page 1. A cursor walk evaluates NOW()/TODAY() at the
 * instant of its first page.
 */
describe('documents: cursor paging sorted by a NOW() formula', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;
  const ids = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'];

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'error' });
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, {
      docType: 'volatile-cursor',
      fields: [
        { id: 'dt', name: 'DT', type: 'datetime' },
        { id: 'now', name: 'Now', type: 'formula', formula: 'NOW()' },
        { id: 'secs', name: 'Secs', type: 'formula', formula: 'DATEDIFF({dt}, NOW(), "seconds")' },
      ],
    });
    // Distinct ages 10, 20, ... seconds apart, plus ties (r4, r5 equal to r0), in an order unlike seq.
    const ages = [50, 10, 30, 20, 50, 50];
    const base = Date.now();
    await seedRows(
      t.dataSource,
      doc,
      ids.map((id, i) => ({ id, values: { dt: new Date(base - (ages[i] as number) * 1000).toISOString() } })),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const walk = async (sort: string, pause = 0): Promise<string[]> => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 10; guard += 1) {
      const res: request.Response = await request(t.http)
        .get(`${doc.path}/data?sort=${sort}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        .set(bearer(owner))
        .expect(200);
      seen.push(...res.body.payload.items.map((row: { id: string }) => row.id));
      cursor = res.body.payload.nextCursor;
      if (!cursor) {
        return seen;
      }
      if (pause > 0) {
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
    throw new Error(`no last page after 10 pages: ${seen.join(',')}`);
  };

  it('walks a sort by NOW() to its end, every row once in insertion order (all values tie)', async () => {
    expect(await walk('now:asc')).toEqual(ids);
    expect(await walk('now:desc')).toEqual(ids);
  });

  it('walks a sort by a formula over NOW() every row once, in the order of the first page, however long it takes', async () => {
    // Ages in seconds grow between pages: the second page must continue the first page's order.
    expect(await walk('secs:desc', 1100)).toEqual(['r0', 'r4', 'r5', 'r2', 'r3', 'r1']);
    expect(await walk('secs:asc', 1100)).toEqual(['r1', 'r3', 'r2', 'r0', 'r4', 'r5']);
  });
});
