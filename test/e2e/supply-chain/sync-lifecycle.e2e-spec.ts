import { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  type Answer,
  answerOf,
  call,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  deleteCatalogRow,
  drainSync,
  type Field,
  number,
  rowsOf,
  syncLogs,
  text,
  writeCatalogRows,
} from './sync.fixtures.js';

interface SyncRequest {
  requestId: string;
  status: string;
  createdBy: string;
  decidedBy: string | null;
  changes: Array<{ operation: string; rowId: string; sourceRowId?: string }>;
}

interface LedgerJob {
  status: string;
  result: Record<string, unknown> | null;
}

const color: Field = {
  id: 'color',
  name: 'color',
  type: 'single_select',
  selectOptions: [
    { id: 'red', label: 'Red' },
    { id: 'blue', label: 'Blue' },
  ],
};
const scopeOf = (label: string): Record<string, unknown> => ({
  mode: 'filter',
  filterGroup: { operator: 'AND', conditions: [{ fieldId: 'color', operator: 'eq', value: label }] },
});
const copyAll = { unmappedFields: 'create', rules: [] };

/**
 * The life of a binding over time (docs/supply-chain.md, "Initial sync and reconcile", "Who the propagation acts as,
 * who is told"): the initial sync of a new binding reconciles the order book with the catalog (rows whose catalog row
 * went away while no binding was active are withdrawn); a changed share scope reconciles every active binding; and
 * the propagation never acts as, nor mails, someone who left the organization.
 */
describe('supply chain: sync lifecycle', () => {
  let t: TestApp;
  let worker: SyncWorker;
  let sup: TestUser;
  let buyer: TestUser;
  let S: string;
  let B: string;

  const send = (
    user: TestUser,
    method: 'get' | 'post' | 'patch' | 'delete',
    path: string,
    body?: unknown,
  ): Promise<Answer> => answerOf(t, user, method, path, body);
  const drain = (): Promise<void> => drainSync(worker);
  const skusOf = async (ob: string, user = buyer, org = B): Promise<unknown[]> =>
    (await rowsOf(t, user, 'orderbook', ob, org)).map((row) => row.values.sku).sort();
  const decide = (conn: string, id: string, action: 'approve' | 'reject') =>
    call(t, sup, 'post', `/organizations/${S}/connections/${conn}/bindings/${id}/${action}`, {}, 200);
  const ledger = async (ob: string, bindingId: string): Promise<LedgerJob[]> =>
    (
      await call<{ items: LedgerJob[] }>(
        t,
        buyer,
        'get',
        `/organizations/${B}/orderbooks/${ob}/bindings/${bindingId}/propagation?pageSize=100`,
      )
    ).items;
  const requestsOf = async (ob: string, bindingId: string, user = buyer, org = B): Promise<SyncRequest[]> =>
    (
      await call<{ items: SyncRequest[] }>(
        t,
        user,
        'get',
        `/organizations/${org}/orderbooks/${ob}/requests?bindingId=${bindingId}&pageSize=100`,
      )
    ).items;
  const mailsTo = async (email: string, kind: string): Promise<Array<{ data: Record<string, unknown> }>> =>
    t.dataSource.query(`SELECT data FROM notifications WHERE lower(recipient) = lower($1) AND kind = $2`, [
      email,
      kind,
    ]);
  /** Adds `user` to the organization with `role`; returns the membership id. */
  const addMember = async (owner: TestUser, org: string, user: TestUser, role: string): Promise<string> =>
    (await call<{ id: string }>(t, owner, 'post', `/organizations/${org}/members`, { userId: user.id, role }))
      .id;

  beforeAll(async () => {
    t = await createTestApp();
    worker = t.app.get(SyncWorker);
    [sup, buyer] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    [S, B] = [sup, buyer].map((user) => user.defaultOrganizationId);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('initial sync reconciles (F6)', () => {
    it('a row deleted from the catalog while the binding was rejected leaves the order book when bound again', async () => {
      const catalog = await createCatalog(t, sup, S, 'Ghosts', [text('sku'), number('price')]);
      const conn = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'g1', values: { sku: 'G1', price: 1 } },
        { id: 'g2', values: { sku: 'G2', price: 2 } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Ghosts', [text('sku'), number('price')]);
      const first = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await decide(conn, first.id, 'approve');
      await drain();
      expect(await skusOf(ob)).toEqual(['G1', 'G2']);

      await decide(conn, first.id, 'reject');
      await deleteCatalogRow(t, sup, S, catalog, 'g1');
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'g2', values: { price: 22 } }]);
      await drain();
      expect(await skusOf(ob)).toEqual(['G1', 'G2']);

      const second = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await decide(conn, second.id, 'approve');
      await drain();
      const rows = await rowsOf(t, buyer, 'orderbook', ob, B);
      expect(rows.map((row) => [row.values.sku, row.values.price])).toEqual([['G2', 22]]);
      const logs = await syncLogs(t, buyer, B, ob, second.id);
      expect(logs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ sourceRowId: 'g1', eventType: 'row_deleted', outcome: 'accepted' }),
        ]),
      );
      // The same binding's later changes go on as usual; the withdrawn row stays away.
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'g3', values: { sku: 'G3', price: 3 } }]);
      await drain();
      expect(await skusOf(ob)).toEqual(['G2', 'G3']);
    });

    it('the withdrawal goes through the accept mode, and a catalog emptied meanwhile is reconciled too', async () => {
      const catalog = await createCatalog(t, sup, S, 'Emptied', [text('sku'), number('price')]);
      const conn = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'e1', values: { sku: 'E1', price: 1 } },
        { id: 'e2', values: { sku: 'E2', price: 2 } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Emptied', [text('sku'), number('price')]);
      const first = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await decide(conn, first.id, 'approve');
      await drain();
      await decide(conn, first.id, 'reject');
      await deleteCatalogRow(t, sup, S, catalog, 'e1');
      await deleteCatalogRow(t, sup, S, catalog, 'e2');

      const second = await createBinding(t, buyer, B, ob, {
        connectionId: conn,
        fieldMapping: copyAll,
        receiverFilter: { acceptMode: 'manual' },
      });
      await decide(conn, second.id, 'approve');
      await drain();
      // Manual: the deletions wait for the buyer, in one pending request.
      expect(await skusOf(ob)).toEqual(['E1', 'E2']);
      const [pending, ...others] = await requestsOf(ob, second.id);
      expect(others).toEqual([]);
      expect(pending?.status).toBe('pending');
      expect(pending?.changes.map((change) => [change.operation, change.sourceRowId]).sort()).toEqual([
        ['delete_row', 'e1'],
        ['delete_row', 'e2'],
      ]);
      await call(
        t,
        buyer,
        'post',
        `/organizations/${B}/orderbooks/${ob}/requests/${pending?.requestId}/accept`,
        {},
        200,
      );
      expect(await skusOf(ob)).toEqual([]);
    });

    it("rows an ended binding brought that the new binding's receiver filter does not let in are withdrawn", async () => {
      const catalog = await createCatalog(t, sup, S, 'Narrower', [text('sku'), number('price')]);
      const conn = await createConnection(t, sup, S, catalog, {});
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'n1', values: { sku: 'N1', price: 5 } },
        { id: 'n2', values: { sku: 'N2', price: 50 } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Narrower', [text('sku'), number('price')]);
      const first = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await drain();
      expect(await skusOf(ob)).toEqual(['N1', 'N2']);
      await decide(conn, first.id, 'reject');
      // Rebinding a public connection after a reject may need the supplier's approval (docs: "Bindings").
      const second = await createBinding(t, buyer, B, ob, {
        connectionId: conn,
        fieldMapping: copyAll,
        receiverFilter: {
          acceptMode: 'auto',
          filterGroup: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'gte', value: 10 }] },
        },
      });
      if (second.status === 'pending') {
        await decide(conn, second.id, 'approve');
      }
      await drain();
      expect(await skusOf(ob)).toEqual(['N2']);
      const withdrawn = (await syncLogs(t, buyer, B, ob, second.id)).find((log) => log.sourceRowId === 'n1');
      expect(withdrawn).toMatchObject({ eventType: 'row_deleted', outcome: 'accepted' });
      expect(withdrawn?.reason).toMatch(/receiver filter/);
    });

    it('rows a live binding of another connection of the catalog holds are never withdrawn by a narrower one', async () => {
      const catalog = await createCatalog(t, sup, S, 'Two feeds', [text('sku'), color]);
      const everything = await createConnection(t, sup, S, catalog, {});
      const redOnly = await createConnection(t, sup, S, catalog, { shareScope: scopeOf('Red') });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'r1', values: { sku: 'R1', color: 'red' } },
        { id: 'b1', values: { sku: 'B1', color: 'blue' } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Two feeds', [text('sku'), color]);
      await createBinding(t, buyer, B, ob, { connectionId: everything, fieldMapping: copyAll });
      await drain();
      expect(await skusOf(ob)).toEqual(['B1', 'R1']);
      await createBinding(t, buyer, B, ob, { connectionId: redOnly, fieldMapping: copyAll });
      await drain();
      expect(await skusOf(ob)).toEqual(['B1', 'R1']);
    });

    it('walks catalogs and links larger than one step (1000 rows) and withdraws the ghost beyond it', async () => {
      const catalog = await createCatalog(t, sup, S, 'Large', [text('sku')]);
      const conn = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
      const ids = Array.from({ length: 1001 }, (_, i) => `k${String(i).padStart(4, '0')}`);
      await writeCatalogRows(
        t,
        sup,
        S,
        catalog,
        ids.slice(0, 1000).map((id) => ({ id, values: { sku: id } })),
      );
      await writeCatalogRows(t, sup, S, catalog, [{ id: ids[1000], values: { sku: ids[1000] } }]);
      const ob = await createOrderBook(t, buyer, B, 'Large', [text('sku')]);
      const count = async (): Promise<number> =>
        (
          await call<{ total: number }>(
            t,
            buyer,
            'get',
            `/doc/orderbook/${ob}/data?organizationId=${B}&pageSize=1`,
          )
        ).total;
      const first = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await decide(conn, first.id, 'approve');
      await drain();
      expect(await count()).toBe(1001);
      await decide(conn, first.id, 'reject');
      await deleteCatalogRow(t, sup, S, catalog, 'k1000');
      const second = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await decide(conn, second.id, 'approve');
      await drain();
      expect(await count()).toBe(1000);
      const [job] = await ledger(ob, second.id);
      expect(job).toMatchObject({
        status: 'applied',
        result: expect.objectContaining({ kind: 'initial_sync', rows: 1001 }),
      });
    }, 60_000);
  });

  describe('a changed share scope reconciles every active binding (F7)', () => {
    it('rows now outside the scope are withdrawn and rows now inside it arrive, once per change', async () => {
      const catalog = await createCatalog(t, sup, S, 'Rescoped', [text('sku'), color]);
      const conn = await createConnection(t, sup, S, catalog, { shareScope: scopeOf('Red') });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'm1', values: { sku: 'M1', color: 'red' } },
        { id: 'm2', values: { sku: 'M2', color: 'blue' } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Rescoped', [text('sku'), color]);
      const binding = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      await drain();
      expect(await skusOf(ob)).toEqual(['M1']);

      // Refused and unchanged scopes queue nothing.
      const refused = await send(sup, 'patch', `/organizations/${S}/connections/${conn}`, {
        shareScope: {
          mode: 'filter',
          filterGroup: { operator: 'AND', conditions: [{ fieldId: 'nope', operator: 'eq', value: 1 }] },
        },
      });
      expect([refused.status, refused.code]).toEqual([400, 'VALIDATION_ERROR']);
      await call(
        t,
        sup,
        'patch',
        `/organizations/${S}/connections/${conn}`,
        { shareScope: scopeOf('Red') },
        200,
      );
      await call(t, sup, 'patch', `/organizations/${S}/connections/${conn}`, { name: 'renamed' }, 200);
      expect(await ledger(ob, binding.id)).toHaveLength(1);

      await call(
        t,
        sup,
        'patch',
        `/organizations/${S}/connections/${conn}`,
        { shareScope: scopeOf('Blue') },
        200,
      );
      await drain();
      expect(await skusOf(ob)).toEqual(['M2']);
      const jobs = await ledger(ob, binding.id);
      expect(jobs).toHaveLength(2);
      expect(jobs[0]).toMatchObject({
        status: 'applied',
        result: expect.objectContaining({ kind: 'reconcile', reason: 'share_scope_changed' }),
      });
      const logs = await syncLogs(t, buyer, B, ob, binding.id);
      expect(
        logs.find((log) => log.sourceRowId === 'm1' && /share scope/.test(log.reason ?? '')),
      ).toMatchObject({
        outcome: 'accepted',
        reason: 'deleted: left the connection share scope',
      });
      await drain();
      expect(await ledger(ob, binding.id)).toHaveLength(2);

      // A scope with every row: both.
      await call(
        t,
        sup,
        'patch',
        `/organizations/${S}/connections/${conn}`,
        { shareScope: { type: 'all' } },
        200,
      );
      await drain();
      expect(await skusOf(ob)).toEqual(['M1', 'M2']);
      expect(await ledger(ob, binding.id)).toHaveLength(3);
    });

    it('every active binding of the connection follows, in every buyer organization', async () => {
      const other = await registerUser(t.http);
      const O = other.defaultOrganizationId;
      const catalog = await createCatalog(t, sup, S, 'Rescoped 2', [text('sku'), color]);
      const conn = await createConnection(t, sup, S, catalog, {});
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'p1', values: { sku: 'P1', color: 'red' } },
        { id: 'p2', values: { sku: 'P2', color: 'blue' } },
      ]);
      const mine = await createOrderBook(t, buyer, B, 'Mine', [text('sku'), color]);
      await createBinding(t, buyer, B, mine, { connectionId: conn, fieldMapping: copyAll });
      const theirs = await createOrderBook(t, other, O, 'Theirs', [text('sku'), color]);
      const theirBinding = await createBinding(t, other, O, theirs, {
        connectionId: conn,
        fieldMapping: copyAll,
      });
      await drain();
      expect(await skusOf(mine)).toEqual(['P1', 'P2']);
      expect(await skusOf(theirs, other, O)).toEqual(['P1', 'P2']);

      await call(
        t,
        sup,
        'patch',
        `/organizations/${S}/connections/${conn}`,
        { shareScope: scopeOf('Red') },
        200,
      );
      await drain();
      expect(await skusOf(mine)).toEqual(['P1']);
      expect(await skusOf(theirs, other, O)).toEqual(['P1']);
      expect((await requestsOf(theirs, theirBinding.id, other, O))[0]?.changes).toEqual([
        expect.objectContaining({ operation: 'delete_row', sourceRowId: 'p2' }),
      ]);
    });

    it('a buyer with manual accept gets the withdrawal as a pending request', async () => {
      const catalog = await createCatalog(t, sup, S, 'Rescoped 3', [text('sku'), color]);
      const conn = await createConnection(t, sup, S, catalog, {});
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'q1', values: { sku: 'Q1', color: 'red' } },
        { id: 'q2', values: { sku: 'Q2', color: 'blue' } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Manual scope', [text('sku'), color]);
      const binding = await createBinding(t, buyer, B, ob, {
        connectionId: conn,
        fieldMapping: copyAll,
        receiverFilter: { acceptMode: 'manual' },
      });
      await drain();
      const [initial] = await requestsOf(ob, binding.id);
      await call(
        t,
        buyer,
        'post',
        `/organizations/${B}/orderbooks/${ob}/requests/${initial?.requestId}/accept`,
        {},
        200,
      );
      expect(await skusOf(ob)).toEqual(['Q1', 'Q2']);

      await call(
        t,
        sup,
        'patch',
        `/organizations/${S}/connections/${conn}`,
        { shareScope: scopeOf('Blue') },
        200,
      );
      await drain();
      expect(await skusOf(ob)).toEqual(['Q1', 'Q2']);
      const [withdrawal] = await requestsOf(ob, binding.id);
      expect(withdrawal).toMatchObject({ status: 'pending' });
      expect(withdrawal?.changes).toEqual([
        expect.objectContaining({ operation: 'delete_row', sourceRowId: 'q1' }),
      ]);
      await call(
        t,
        buyer,
        'post',
        `/organizations/${B}/orderbooks/${ob}/requests/${withdrawal?.requestId}/accept`,
        {},
        200,
      );
      expect(await skusOf(ob)).toEqual(['Q2']);
    });
  });

  describe('who the propagation acts as, who is told (F9)', () => {
    it('after the binding creator leaves, writes act as the owner and mails go to owners and admins', async () => {
      const owner = await registerUser(t.http);
      const O = owner.defaultOrganizationId;
      const [creator, admin] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
      const creatorMembership = await addMember(owner, O, creator, 'member');
      await addMember(owner, O, admin, 'admin');
      const catalog = await createCatalog(t, sup, S, 'Leaver', [text('sku'), number('price')]);
      const conn = await createConnection(t, sup, S, catalog, {});
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'h1', values: { sku: 'H1', price: 1 } }]);
      const ob = await createOrderBook(t, creator, O, 'Secret', [text('sku'), number('price')]);
      const binding = await createBinding(t, creator, O, ob, { connectionId: conn, fieldMapping: copyAll });
      await drain();
      // While the creator is a member: the writes are theirs, and only they are mailed.
      expect((await mailsTo(creator.email, 'orderbook_sync_request')).length).toBe(1);
      expect(await mailsTo(owner.email, 'orderbook_sync_request')).toEqual([]);

      await call(t, owner, 'delete', `/organizations/${O}/members/${creatorMembership}`, undefined, 200);
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'h1', values: { price: 2 } }]);
      await drain();
      const page = await call<{ items: Array<{ updatedBy: string; values: unknown[] }> }>(
        t,
        owner,
        'get',
        `/doc/orderbook/${ob}/data?organizationId=${O}`,
      );
      expect(page.items).toHaveLength(1);
      expect(page.items[0]?.updatedBy).toBe(owner.id);
      const [latest] = await requestsOf(ob, binding.id, owner, O);
      expect(latest).toMatchObject({ status: 'accepted', createdBy: owner.id, decidedBy: owner.id });
      expect((await mailsTo(creator.email, 'orderbook_sync_request')).length).toBe(1);
      expect(
        (await mailsTo(owner.email, 'orderbook_sync_request')).map((mail) => mail.data.requestId),
      ).toEqual([latest?.requestId]);
      expect(
        (await mailsTo(admin.email, 'orderbook_sync_request')).map((mail) => mail.data.requestId),
      ).toEqual([latest?.requestId]);
    });

    it("after the connection's creator leaves, the supplier's owners and admins are asked to approve", async () => {
      const [supAdmin, supOther] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
      const adminMembership = await addMember(sup, S, supAdmin, 'admin');
      await addMember(sup, S, supOther, 'member');
      const catalog = await createCatalog(t, sup, S, 'Approver left', [text('sku')]);
      const conn = (
        await call<{ id: string }>(
          t,
          supAdmin,
          'post',
          `/organizations/${S}/catalogs/${catalog}/connections`,
          {
            name: 'Deal',
            accessControl: 'approval',
          },
        )
      ).id;
      const ob = await createOrderBook(t, buyer, B, 'Approver left', [text('sku')]);
      const asked = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAll });
      expect(
        (await mailsTo(supAdmin.email, 'binding_pending_approval')).map((mail) => mail.data.bindingId),
      ).toEqual([asked.id]);

      await call(t, sup, 'delete', `/organizations/${S}/members/${adminMembership}`, undefined, 200);
      const ob2 = await createOrderBook(t, buyer, B, 'Approver left 2', [text('sku')]);
      const again = await createBinding(t, buyer, B, ob2, { connectionId: conn, fieldMapping: copyAll });
      expect(again.status).toBe('pending');
      expect(await mailsTo(supAdmin.email, 'binding_pending_approval')).toHaveLength(1);
      expect(
        (await mailsTo(sup.email, 'binding_pending_approval')).map((mail) => mail.data.bindingId),
      ).toContain(again.id);
      // A plain member cannot approve: not asked.
      expect(await mailsTo(supOther.email, 'binding_pending_approval')).toEqual([]);
    });

    it("after the binding's creator leaves, the decision is told to the buyer's owners and admins", async () => {
      const owner = await registerUser(t.http);
      const O = owner.defaultOrganizationId;
      const creator = await registerUser(t.http);
      const membership = await addMember(owner, O, creator, 'member');
      const catalog = await createCatalog(t, sup, S, 'Decision', [text('sku')]);
      const conn = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
      const ob = await createOrderBook(t, creator, O, 'Decision', [text('sku')]);
      const binding = await createBinding(t, creator, O, ob, { connectionId: conn, fieldMapping: copyAll });
      await call(t, owner, 'delete', `/organizations/${O}/members/${membership}`, undefined, 200);
      await decide(conn, binding.id, 'approve');
      expect(await mailsTo(creator.email, 'binding_approved')).toEqual([]);
      expect((await mailsTo(owner.email, 'binding_approved')).map((mail) => mail.data.bindingId)).toEqual([
        binding.id,
      ]);
    });
  });
});
