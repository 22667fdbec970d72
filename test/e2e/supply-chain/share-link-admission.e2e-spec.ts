import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, call, createCatalog, createConnection, createOrderBook } from './sync.fixtures.js';

interface Answer {
  status: number;
  code?: string;
  details?: unknown;
  payload?: Record<string, unknown>;
}

/**
 * Share codes presented by buyer organizations (docs/supply-chain.md, "Share links"): a code tells nothing about
 * connections it does not belong to, `maxUses` bounds the organizations admitted through it, and organization ids
 * in the path compare case-insensitively.
 */
describe('supply chain: share-link admission', () => {
  let t: TestApp;
  let sup: TestUser;
  let c: TestUser;
  let d: TestUser;
  let e: TestUser;
  let x: TestUser;
  let S: string;
  let C: string;
  let D: string;
  let E: string;
  let X: string;
  let catalogId: string;
  let privateConn: string;
  let xOrderBook: string;

  const send = async (
    user: TestUser,
    method: 'get' | 'post',
    path: string,
    body?: object,
  ): Promise<Answer> => {
    const url = path.startsWith('/connect/') ? path : `${API}${path}`;
    const req = (method === 'get' ? request(t.http).get(url) : request(t.http).post(url)).set(bearer(user));
    const res = body === undefined ? await req : await req.send(body);
    return { status: res.status, code: res.body.code, details: res.body.details, payload: res.body.payload };
  };
  const shareLink = async (body: object): Promise<{ id: string; code: string }> =>
    call(t, sup, 'post', `/organizations/${S}/connections/${privateConn}/share-link`, body);
  const usesOf = async (linkId: string): Promise<number> =>
    (
      await call<{ items: Array<{ id: string; uses: number }> }>(
        t,
        sup,
        'get',
        `/organizations/${S}/connections/${privateConn}/share-links?pageSize=100`,
      )
    ).items.find((link) => link.id === linkId)?.uses as number;

  beforeAll(async () => {
    t = await createTestApp();
    [sup, c, d, e, x] = await Promise.all(Array.from({ length: 5 }, () => registerUser(t.http)));
    [S, C, D, E, X] = [sup, c, d, e, x].map((user) => user.defaultOrganizationId);
    catalogId = await createCatalog(t, sup, S, 'Private catalog', [
      { id: 'sku', name: 'SKU', type: 'text' },
      { id: 'price', name: 'Price', type: 'number' },
    ]);
    // Approval mode listing only the supplier: nobody else sees it or may ask without a code. (Without a list,
    // approval mode is open to ask: see resources.e2e-spec.)
    privateConn = await createConnection(t, sup, S, catalogId, { accessControl: { mode: 'approval', allowedOrganizations: [S] } });
    xOrderBook = await createOrderBook(t, x, X, 'Stranger book', [{ id: 'sku', name: 'SKU', type: 'text' }]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('the spec flow without codes: a connection created without accessControl is open to ask; the supplier decides', async () => {
    // As spec 2.14 writes a connection create, nothing but a name: no accessControl.
    const openConn = (await call<{ id: string }>(t, sup, 'post', `/organizations/${S}/catalogs/${catalogId}/connections`, { name: 'Open' })).id;
    const connection = await call<{ accessControl: unknown }>(t, sup, 'get', `/organizations/${S}/connections/${openConn}`);
    expect(connection.accessControl).toEqual({ mode: 'approval', allowedOrganizations: [] });
    const book = (
      await call<{ id: string; fields: { id: string; sourceFieldId: string }[] }>(t, d, 'post', `/organizations/${D}/orderbooks`, {
        name: 'D book',
        sourceConnectionIds: [openConn],
      })
    ).id;
    const asked = await call<{ id: string; status: string; admittedVia: string }>(t, d, 'post', `/organizations/${D}/orderbooks/${book}/bindings`, {
      connectionId: openConn,
      targetOrderBookId: book,
    });
    expect(asked).toMatchObject({ status: 'pending', admittedVia: 'approval' });
    // Spec 2.4 names a decision's note reviewNote; note is the older name. Both given and different is refused.
    await call(t, sup, 'post', `/organizations/${S}/connections/${openConn}/bindings/${asked.id}/approve`, { note: 'a', reviewNote: 'b' }, 400);
    const approved = await call<{ status: string; reviewNote: string }>(
      t,
      sup,
      'post',
      `/organizations/${S}/connections/${openConn}/bindings/${asked.id}/approve`,
      { reviewNote: 'welcome' },
      200,
    );
    expect(approved).toMatchObject({ status: 'active', reviewNote: 'welcome' });
    // A condition's operand as `values` (spec 2.14: "value (or values)"), one element for a one-operand operator.
    const scoped = await call<{ shareScope: { filterGroup: { conditions: unknown[] } } }>(t, sup, 'post', `/organizations/${S}/catalogs/${catalogId}/connections`, {
      name: 'Scoped',
      shareScope: { mode: 'filter', filterGroup: { operator: 'AND', conditions: [{ field: 'price', operator: 'gte', values: [15] }], groups: [] } },
    });
    expect(scoped.shareScope.filterGroup.conditions).toEqual([expect.objectContaining({ fieldId: 'price', operator: 'gte', value: 15 })]);
    // A list narrows who may ask: the private connection stays hidden without a code.
    await call(t, d, 'post', `/organizations/${D}/orderbooks/${book}/bindings`, { connectionId: privateConn }, 404);
  });

  it("a stranger's own revoked, expired or unknown codes answer for a real connection id exactly as for a random one", async () => {
    const xCatalog = await createCatalog(t, x, X, 'Own catalog', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const xConn = await createConnection(t, x, X, xCatalog, {});
    const revoked = await call<{ id: string; code: string }>(
      t,
      x,
      'post',
      `/organizations/${X}/connections/${xConn}/share-link`,
      {},
    );
    await call(t, x, 'delete', `/organizations/${X}/connections/${xConn}/share-links/${revoked.id}`);
    const expired = await call<{ id: string; code: string }>(
      t,
      x,
      'post',
      `/organizations/${X}/connections/${xConn}/share-link`,
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
    );
    await t.dataSource.query(
      `UPDATE connection_share_links SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [expired.id],
    );
    const unknownId = randomUUID();
    for (const code of [revoked.code, expired.code, 'no-such-code']) {
      const attempts = (connectionId: string): Array<Promise<Answer>> => [
        send(x, 'post', `/organizations/${X}/orderbooks/${xOrderBook}/field-mapping/preview`, {
          connectionId,
          shareCode: code,
        }),
        send(x, 'post', `/organizations/${X}/orderbooks/${xOrderBook}/bindings`, {
          connectionId,
          shareCode: code,
        }),
        send(x, 'post', `/organizations/${X}/orderbooks`, {
          name: 'probe',
          sourceConnectionIds: [connectionId],
          shareCode: code,
        }),
      ];
      const real = await Promise.all(attempts(privateConn));
      const random = await Promise.all(attempts(unknownId));
      expect(real).toEqual(random);
      for (const answer of real) {
        expect([answer.status, answer.code]).toEqual([404, 'NOT_FOUND']);
      }
    }

    // A code of that very connection still says why it is refused.
    const own = await shareLink({});
    await call(t, sup, 'delete', `/organizations/${S}/connections/${privateConn}/share-links/${own.id}`);
    const refused = await send(c, 'post', `/organizations/${C}/orderbooks`, {
      name: 'x',
      sourceConnectionIds: [privateConn],
      shareCode: own.code,
    });
    expect([refused.status, refused.code]).toEqual([410, 'SHARE_LINK_EXPIRED']);
  });

  it('maxUses bounds the organizations admitted through a link; reads and repeated use by one organization spend nothing', async () => {
    const link = await shareLink({ maxUses: 1 });
    for (let i = 0; i < 2; i += 1) {
      const resolved = await send(c, 'get', `/connect/share/${link.code}`);
      expect([resolved.status, resolved.payload?.remainingUses]).toEqual([200, 1]);
    }
    const cBook = (
      await call<{ id: string }>(t, c, 'post', `/organizations/${C}/orderbooks`, {
        name: 'C book',
        sourceConnectionIds: [privateConn],
        shareCode: link.code,
      })
    ).id;
    await call(
      t,
      c,
      'post',
      `/organizations/${C}/orderbooks/${cBook}/field-mapping/preview`,
      { connectionId: privateConn, shareCode: link.code },
      200,
    );
    expect(await usesOf(link.id)).toBe(0);

    const bound = await call<{ id: string; status: string; admittedVia: string }>(
      t,
      c,
      'post',
      `/organizations/${C}/orderbooks/${cBook}/bindings`,
      { connectionId: privateConn, shareCode: link.code },
    );
    expect(bound).toMatchObject({ status: 'pending', admittedVia: 'share_link' });
    expect(await usesOf(link.id)).toBe(1);
    // The same organization again: no new use, even after the supplier rejected it.
    await call(
      t,
      sup,
      'post',
      `/organizations/${S}/connections/${privateConn}/bindings/${bound.id}/reject`,
      {},
      200,
    );
    const cSecond = await createOrderBook(t, c, C, 'C second', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    await call(t, c, 'post', `/organizations/${C}/orderbooks/${cSecond}/bindings`, {
      connectionId: privateConn,
      shareCode: link.code,
    });
    await call(t, c, 'post', `/organizations/${C}/orderbooks/${cBook}/bindings`, {
      connectionId: privateConn,
      shareCode: link.code,
    });
    expect(await usesOf(link.id)).toBe(1);
    const stillC = await send(c, 'get', `/connect/share/${link.code}`);
    expect([stillC.status, stillC.payload?.remainingUses]).toEqual([200, 0]);

    // Any other organization is refused wherever it presents the code.
    const dBook = await createOrderBook(t, d, D, 'D book', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const refusals = [
      await send(d, 'get', `/connect/share/${link.code}`),
      await send(d, 'post', `/organizations/${D}/orderbooks`, {
        name: 'D from link',
        sourceConnectionIds: [privateConn],
        shareCode: link.code,
      }),
      await send(d, 'post', `/organizations/${D}/orderbooks/${dBook}/field-mapping/preview`, {
        connectionId: privateConn,
        shareCode: link.code,
      }),
      await send(d, 'post', `/organizations/${D}/orderbooks/${dBook}/bindings`, {
        connectionId: privateConn,
        shareCode: link.code,
      }),
    ];
    for (const refusal of refusals) {
      expect([refusal.status, refusal.code]).toEqual([410, 'SHARE_LINK_EXHAUSTED']);
      expect(refusal.payload).toMatchObject({ maxUses: 1, uses: 1 });
    }
    expect(await usesOf(link.id)).toBe(1);
  });

  it('two organizations binding at once through a one-use link: one is admitted', async () => {
    const link = await shareLink({ maxUses: 1 });
    const dBook = await createOrderBook(t, d, D, 'D race', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const eBook = await createOrderBook(t, e, E, 'E race', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const answers = await Promise.all([
      send(d, 'post', `/organizations/${D}/orderbooks/${dBook}/bindings`, {
        connectionId: privateConn,
        shareCode: link.code,
      }),
      send(e, 'post', `/organizations/${E}/orderbooks/${eBook}/bindings`, {
        connectionId: privateConn,
        shareCode: link.code,
      }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 410]);
    expect(answers.find((answer) => answer.status === 410)?.code).toBe('SHARE_LINK_EXHAUSTED');
    expect(await usesOf(link.id)).toBe(1);
  });

  it('an organization id in upper case in the path is the same organization', async () => {
    const owner = await send(sup, 'get', `/organizations/${S.toUpperCase()}/connections/${privateConn}`);
    expect([owner.status, owner.payload?.view]).toEqual([200, 'owner']);
    const listed = await send(sup, 'get', `/organizations/${S.toUpperCase()}/connections`);
    expect(listed.status).toBe(200);

    const whitelisted = await createConnection(t, sup, S, catalogId, {
      accessControl: { mode: 'whitelist', allowedOrganizations: [E.toUpperCase()] },
    });
    const shared = await send(e, 'get', `/organizations/${E.toUpperCase()}/connections/${whitelisted}`);
    expect([shared.status, shared.payload?.view]).toEqual([200, 'shared']);
    const eBook = await createOrderBook(t, e, E, 'E whitelisted', []);
    const binding = await send(e, 'post', `/organizations/${E.toUpperCase()}/orderbooks/${eBook}/bindings`, {
      connectionId: whitelisted,
      fieldMapping: { rules: [] },
    });
    expect([binding.status, binding.payload?.status, binding.payload?.admittedVia]).toEqual([
      201,
      'active',
      'whitelist',
    ]);
    expect(binding.payload?.targetOrderBookId).toBe(eBook);
  });

  it("stops serving a deleted organization's connections through their share links", async () => {
    const gone = await registerUser(t.http);
    const G = gone.defaultOrganizationId;
    const goneCatalog = await createCatalog(t, gone, G, 'Soon gone', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const goneConn = await createConnection(t, gone, G, goneCatalog, { accessControl: 'approval' });
    const link = await call<{ id: string; code: string }>(t, gone, 'post', `/organizations/${G}/connections/${goneConn}/share-link`, {});
    const before = await send(c, 'get', `/connect/share/${link.code}`);
    expect(before.status).toBe(200);
    await request(t.http).delete(`${API}/organizations/${G}`).set(bearer(gone)).expect(200);
    const after = await send(c, 'get', `/connect/share/${link.code}`);
    expect(after.status).toBe(410);
    const preview = await send(c, 'get', `/organizations/${C}/connections/${goneConn}`);
    expect(preview.status).toBe(404);
  });
});
