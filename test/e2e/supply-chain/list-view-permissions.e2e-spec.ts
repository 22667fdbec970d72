import request from 'supertest';
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

/**
 * `GET /catalogs` and `GET /orderbooks` are open to any member (docs/supply-chain.md, "Routes"). A catalog or order
 * book whose document settings' `permissions.view` (or its type's) shut the caller out is left out of the list —
 * before paging, so `total` and the pages stay right — instead of refusing the whole list with 403.
 */
describe('supply chain: catalog and order-book lists under permissions.view', () => {
  let t: TestApp;
  let O: TestOrganization;
  let owner: TestUser;
  let member: TestUser;
  let guest: TestUser;
  let stranger: TestUser;
  const catalogs: Record<string, string> = {};
  const orderBooks: Record<string, string> = {};

  const http = (): ReturnType<typeof request> => request(t.http);
  const sc = (path: string): string => `${API}/organizations/${O.id}${path}`;
  const names = (res: request.Response): string[] => res.body.payload.items.map((item: { name: string }) => item.name);
  const settings = async (docType: string, id: string, view: string[]): Promise<void> => {
    await http()
      .put(`${API}/doc/${docType}/${id}/settings?organizationId=${O.id}`)
      .set(bearer(owner))
      .send({ permissions: { view } })
      .expect(200);
  };

  beforeAll(async () => {
    t = await createTestApp();
    [owner, member, guest, stranger] = await Promise.all(Array.from({ length: 4 }, () => registerUser(t.http)));
    O = await createOrganization(t.http, owner, { name: 'Lists Co' });
    await addMember(t.http, owner, O.id, member, 'member');
    await addMember(t.http, owner, O.id, guest, 'guest');
    for (const name of ['A', 'B', 'C', 'D']) {
      const res = await http().post(sc('/catalogs')).set(bearer(owner)).send({ name, catalogType: 'product' }).expect(201);
      catalogs[name] = res.body.payload.id as string;
      const book = await http().post(sc('/orderbooks')).set(bearer(owner)).send({ name }).expect(201);
      orderBooks[name] = book.body.payload.id as string;
    }
    // B: owners only. C: editors and up (members, not guests). D: the guest by id (`user:` form) — and owners.
    for (const [docType, ids] of [['catalog', catalogs], ['orderbook', orderBooks]] as const) {
      await settings(docType, ids.B as string, ['role:owner']);
      await settings(docType, ids.C as string, ['role:editor']);
      await settings(docType, ids.D as string, [`user:${guest.id.toUpperCase()}`]);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  for (const path of ['/catalogs', '/orderbooks']) {
    it(`${path}: a member gets the items they may view, filtered before paging; the closed one is left out`, async () => {
      const all = await http().get(sc(path)).set(bearer(member)).expect(200);
      expect(names(all)).toEqual(['A', 'C']);
      expect(all.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 2, totalPages: 1 });
      const first = await http().get(sc(`${path}?pageSize=1`)).set(bearer(member)).expect(200);
      expect(names(first)).toEqual(['A']);
      expect(first.body.payload).toMatchObject({ total: 2, totalPages: 2 });
      const second = await http().get(sc(`${path}?pageSize=1&page=2`)).set(bearer(member)).expect(200);
      expect(names(second)).toEqual(['C']);

      // The guest: `role:editor` shuts them out of C, their id lets them into D.
      const guestList = await http().get(sc(path)).set(bearer(guest)).expect(200);
      expect(names(guestList)).toEqual(['A', 'D']);
      expect(guestList.body.payload.total).toBe(2);

      // Managers are never narrowed.
      const ownerList = await http().get(sc(path)).set(bearer(owner)).expect(200);
      expect(names(ownerList)).toEqual(['A', 'B', 'C', 'D']);

      // Strangers: unchanged (404, like an organization that does not exist).
      const refused = await http().get(sc(path)).set(bearer(stranger)).expect(404);
      expect(refused.body.code).toBe('NOT_FOUND');
    });
  }

  it('an empty list admits managers only, `*` every reader (as opening the document decides)', async () => {
    for (const [name, view] of [['E', []], ['F', ['*']]] as const) {
      const res = await http().post(sc('/catalogs')).set(bearer(owner)).send({ name, catalogType: 'product' }).expect(201);
      catalogs[name] = res.body.payload.id as string;
      await settings('catalog', catalogs[name] as string, [...view]);
    }
    expect(names(await http().get(sc('/catalogs')).set(bearer(guest)).expect(200))).toEqual(['A', 'D', 'F']);
    expect(names(await http().get(sc('/catalogs')).set(bearer(member)).expect(200))).toEqual(['A', 'C', 'F']);
    await http().get(sc(`/catalogs/${catalogs.E}`)).set(bearer(member)).expect(403);
    await http().get(sc(`/catalogs/${catalogs.F}`)).set(bearer(guest)).expect(200);
  });

  it('the type-level permissions.view narrows the lists too (organization-level type settings)', async () => {
    await http()
      .put(`${API}/doc/catalog/setting?organizationId=${O.id}`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:editor'] } })
      .expect(200);
    const guestList = await http().get(sc('/catalogs')).set(bearer(guest)).expect(200);
    expect(guestList.body.payload).toMatchObject({ items: [], total: 0, totalPages: 0 });
    const memberList = await http().get(sc('/catalogs')).set(bearer(member)).expect(200);
    expect(names(memberList)).toEqual(['A', 'C', 'F']);
    // The order books' type is not narrowed.
    expect(names(await http().get(sc('/orderbooks')).set(bearer(guest)).expect(200))).toEqual(['A', 'D']);
  });
});
