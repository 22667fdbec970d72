import type { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import {
  acceptSyncRequest,
  answerOf,
  call,
  copyAllFields,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  decideBinding,
  deleteCatalogRow,
  settleSync,
  type Field,
  number,
  openSyncApp,
  registerMembers,
  removeMember,
  rowCount,
  rowsOf,
  select,
  shareCatalog,
  skusOf,
  syncLogs,
  syncRequests,
  text,
  updateConnection,
  where,
  writeCatalogRows,
} from './sync.fixtures.js';

interface LedgerJob {
  status: string;
  result: Record<string, unknown> | null;
}

const color = select('color', 'single_select', ['Red', 'Blue']);
const skuAndPrice: Field[] = [text('sku'), number('price')];
const skuAndColor: Field[] = [text('sku'), color];
const scopeOf = (label: string): Record<string, unknown> => ({
  mode: 'filter',
  filterGroup: where('color', 'eq', label),
});

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

  /** Dispatches the outbox (the revision listener queues the jobs) and runs the propagation until nothing is due. */
  const drain = (): Promise<void> => settleSync(t, worker);
  const skus = (ob: string, user = buyer, org = B): Promise<unknown[]> => skusOf(t, user, org, ob);
  const decide = (conn: string, id: string, action: 'approve' | 'reject') =>
    decideBinding(t, sup, S, conn, id, action);
  /** Binds `ob` to the connection with every catalog field copied; `options` add to the binding's body. */
  const bind = (ob: string, conn: string, options: Record<string, unknown> = {}, user = buyer, org = B) =>
    createBinding(t, user, org, ob, { connectionId: conn, fieldMapping: copyAllFields, ...options });
  /** A binding of the buyer's `ob` to an approval connection, approved by the supplier. */
  const bindApproved = async (ob: string, conn: string, options: Record<string, unknown> = {}) => {
    const binding = await bind(ob, conn, options);
    await decide(conn, binding.id, 'approve');
    return binding;
  };
  const rescope = (conn: string, shareScope: Record<string, unknown>): Promise<void> =>
    updateConnection(t, sup, S, conn, { shareScope });
  const requestsOf = (ob: string, bindingId: string, user = buyer, org = B) =>
    syncRequests(t, user, org, ob, { bindingId, pageSize: '100' });
  const ledger = async (ob: string, bindingId: string): Promise<LedgerJob[]> =>
    (
      await call<{ items: LedgerJob[] }>(
        t,
        buyer,
        'get',
        `/organizations/${B}/orderbooks/${ob}/bindings/${bindingId}/propagation?pageSize=100`,
      )
    ).items;
  const mailsTo = async (email: string, kind: string): Promise<Array<{ data: Record<string, unknown> }>> =>
    t.dataSource.query(`SELECT data FROM notifications WHERE lower(recipient) = lower($1) AND kind = $2`, [
      email,
      kind,
    ]);

  beforeAll(async () => {
    ({
      t,
      worker,
      users: [sup, buyer],
      orgs: [S, B],
    } = await openSyncApp(2));
  });

  afterAll(async () => {
    await t.close();
  });

  describe('initial sync reconciles (F6)', () => {
    it('a row deleted from the catalog while the binding was rejected leaves the order book when bound again', async () => {
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Ghosts', skuAndPrice, {
        accessControl: 'approval',
      });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'g1', values: { sku: 'G1', price: 1 } },
        { id: 'g2', values: { sku: 'G2', price: 2 } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Ghosts', skuAndPrice);
      const first = await bindApproved(ob, conn);
      await drain();
      expect(await skus(ob)).toEqual(['G1', 'G2']);

      await decide(conn, first.id, 'reject');
      await deleteCatalogRow(t, sup, S, catalog, 'g1');
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'g2', values: { price: 22 } }]);
      await drain();
      expect(await skus(ob)).toEqual(['G1', 'G2']);

      const second = await bindApproved(ob, conn);
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
      expect(await skus(ob)).toEqual(['G2', 'G3']);
    });

    it('the withdrawal goes through the accept mode, and a catalog emptied meanwhile is reconciled too', async () => {
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Emptied', skuAndPrice, {
        accessControl: 'approval',
      });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'e1', values: { sku: 'E1', price: 1 } },
        { id: 'e2', values: { sku: 'E2', price: 2 } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Emptied', skuAndPrice);
      const first = await bindApproved(ob, conn);
      await drain();
      await decide(conn, first.id, 'reject');
      await deleteCatalogRow(t, sup, S, catalog, 'e1');
      await deleteCatalogRow(t, sup, S, catalog, 'e2');

      const second = await bindApproved(ob, conn, { receiverFilter: { acceptMode: 'manual' } });
      await drain();
      // Manual: the deletions wait for the buyer, in one pending request.
      expect(await skus(ob)).toEqual(['E1', 'E2']);
      const [pending, ...others] = await requestsOf(ob, second.id);
      expect(others).toEqual([]);
      expect(pending?.status).toBe('pending');
      expect(pending?.changes.map((change) => [change.operation, change.sourceRowId]).sort()).toEqual([
        ['delete_row', 'e1'],
        ['delete_row', 'e2'],
      ]);
      await acceptSyncRequest(t, buyer, B, ob, pending?.requestId);
      expect(await skus(ob)).toEqual([]);
    });

    it("rows an ended binding brought that the new binding's receiver filter does not let in are withdrawn", async () => {
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Narrower', skuAndPrice);
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'n1', values: { sku: 'N1', price: 5 } },
        { id: 'n2', values: { sku: 'N2', price: 50 } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Narrower', skuAndPrice);
      const first = await bind(ob, conn);
      await drain();
      expect(await skus(ob)).toEqual(['N1', 'N2']);
      await decide(conn, first.id, 'reject');
      // Rebinding a public connection after a reject may need the supplier's approval (docs: "Bindings").
      const second = await bind(ob, conn, {
        receiverFilter: { acceptMode: 'auto', filterGroup: where('price', 'gte', 10) },
      });
      if (second.status === 'pending') {
        await decide(conn, second.id, 'approve');
      }
      await drain();
      expect(await skus(ob)).toEqual(['N2']);
      const withdrawn = (await syncLogs(t, buyer, B, ob, second.id)).find((log) => log.sourceRowId === 'n1');
      expect(withdrawn).toMatchObject({ eventType: 'row_deleted', outcome: 'accepted' });
      expect(withdrawn?.reason).toMatch(/receiver filter/);
    });

    it('rows a live binding of another connection of the catalog holds are never withdrawn by a narrower one', async () => {
      const { catalog, conn: everything } = await shareCatalog(t, sup, S, 'Two feeds', skuAndColor);
      const redOnly = await createConnection(t, sup, S, catalog, { shareScope: scopeOf('Red') });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'r1', values: { sku: 'R1', color: 'red' } },
        { id: 'b1', values: { sku: 'B1', color: 'blue' } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Two feeds', skuAndColor);
      await bind(ob, everything);
      await drain();
      expect(await skus(ob)).toEqual(['B1', 'R1']);
      await bind(ob, redOnly);
      await drain();
      expect(await skus(ob)).toEqual(['B1', 'R1']);
    });

    it('walks catalogs and links larger than one step (1000 rows) and withdraws the ghost beyond it', async () => {
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Large', [text('sku')], {
        accessControl: 'approval',
      });
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
      const first = await bindApproved(ob, conn);
      await drain();
      expect(await rowCount(t, buyer, 'orderbook', ob, B)).toBe(1001);
      await decide(conn, first.id, 'reject');
      await deleteCatalogRow(t, sup, S, catalog, 'k1000');
      const second = await bindApproved(ob, conn);
      await drain();
      expect(await rowCount(t, buyer, 'orderbook', ob, B)).toBe(1000);
      const [job] = await ledger(ob, second.id);
      expect(job).toMatchObject({
        status: 'applied',
        result: expect.objectContaining({ kind: 'initial_sync', rows: 1001 }),
      });
    }, 60_000);
  });

  describe('a changed share scope reconciles every active binding (F7)', () => {
    it('rows now outside the scope are withdrawn and rows now inside it arrive, once per change', async () => {
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Rescoped', skuAndColor, {
        shareScope: scopeOf('Red'),
      });
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'm1', values: { sku: 'M1', color: 'red' } },
        { id: 'm2', values: { sku: 'M2', color: 'blue' } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Rescoped', skuAndColor);
      const binding = await bind(ob, conn);
      await drain();
      expect(await skus(ob)).toEqual(['M1']);

      // Refused and unchanged scopes queue nothing.
      const refused = await answerOf(t, sup, 'patch', `/organizations/${S}/connections/${conn}`, {
        shareScope: { mode: 'filter', filterGroup: where('nope', 'eq', 1) },
      });
      expect([refused.status, refused.code]).toEqual([400, 'VALIDATION_ERROR']);
      await rescope(conn, scopeOf('Red'));
      await updateConnection(t, sup, S, conn, { name: 'renamed' });
      expect(await ledger(ob, binding.id)).toHaveLength(1);

      await rescope(conn, scopeOf('Blue'));
      await drain();
      expect(await skus(ob)).toEqual(['M2']);
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
      await rescope(conn, { type: 'all' });
      await drain();
      expect(await skus(ob)).toEqual(['M1', 'M2']);
      expect(await ledger(ob, binding.id)).toHaveLength(3);
    });

    it('every active binding of the connection follows, in every buyer organization', async () => {
      const other = await registerUser(t.http);
      const O = other.defaultOrganizationId;
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Rescoped 2', skuAndColor);
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'p1', values: { sku: 'P1', color: 'red' } },
        { id: 'p2', values: { sku: 'P2', color: 'blue' } },
      ]);
      const mine = await createOrderBook(t, buyer, B, 'Mine', skuAndColor);
      await bind(mine, conn);
      const theirs = await createOrderBook(t, other, O, 'Theirs', skuAndColor);
      const theirBinding = await bind(theirs, conn, {}, other, O);
      await drain();
      expect(await skus(mine)).toEqual(['P1', 'P2']);
      expect(await skus(theirs, other, O)).toEqual(['P1', 'P2']);

      await rescope(conn, scopeOf('Red'));
      await drain();
      expect(await skus(mine)).toEqual(['P1']);
      expect(await skus(theirs, other, O)).toEqual(['P1']);
      expect((await requestsOf(theirs, theirBinding.id, other, O))[0]?.changes).toEqual([
        expect.objectContaining({ operation: 'delete_row', sourceRowId: 'p2' }),
      ]);
    });

    it('a buyer with manual accept gets the withdrawal as a pending request', async () => {
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Rescoped 3', skuAndColor);
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'q1', values: { sku: 'Q1', color: 'red' } },
        { id: 'q2', values: { sku: 'Q2', color: 'blue' } },
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Manual scope', skuAndColor);
      const binding = await bind(ob, conn, { receiverFilter: { acceptMode: 'manual' } });
      await drain();
      const [initial] = await requestsOf(ob, binding.id);
      await acceptSyncRequest(t, buyer, B, ob, initial?.requestId);
      expect(await skus(ob)).toEqual(['Q1', 'Q2']);

      await rescope(conn, scopeOf('Blue'));
      await drain();
      expect(await skus(ob)).toEqual(['Q1', 'Q2']);
      const [withdrawal] = await requestsOf(ob, binding.id);
      expect(withdrawal).toMatchObject({ status: 'pending' });
      expect(withdrawal?.changes).toEqual([
        expect.objectContaining({ operation: 'delete_row', sourceRowId: 'q1' }),
      ]);
      await acceptSyncRequest(t, buyer, B, ob, withdrawal?.requestId);
      expect(await skus(ob)).toEqual(['Q2']);
    });
  });

  describe('who the propagation acts as, who is told (F9)', () => {
    it('after the binding creator leaves, writes act as the owner and mails go to owners and admins', async () => {
      const owner = await registerUser(t.http);
      const O = owner.defaultOrganizationId;
      const [creator, admin] = await registerMembers(t, owner, O, ['member', 'admin']);
      const { catalog, conn } = await shareCatalog(t, sup, S, 'Leaver', skuAndPrice);
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'h1', values: { sku: 'H1', price: 1 } }]);
      const ob = await createOrderBook(t, creator, O, 'Secret', skuAndPrice);
      const binding = await bind(ob, conn, {}, creator, O);
      await drain();
      // While the creator is a member: the writes are theirs, and only they are mailed.
      expect((await mailsTo(creator.email, 'orderbook_sync_request')).length).toBe(1);
      expect(await mailsTo(owner.email, 'orderbook_sync_request')).toEqual([]);

      await removeMember(t, owner, O, creator.membershipId);
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
      const [supAdmin, supOther] = await registerMembers(t, sup, S, ['admin', 'member']);
      const catalog = await createCatalog(t, sup, S, 'Approver left', [text('sku')]);
      const conn = await createConnection(t, supAdmin, S, catalog, {
        name: 'Deal',
        accessControl: 'approval',
      });
      const ob = await createOrderBook(t, buyer, B, 'Approver left', [text('sku')]);
      const asked = await bind(ob, conn);
      expect(
        (await mailsTo(supAdmin.email, 'binding_pending_approval')).map((mail) => mail.data.bindingId),
      ).toEqual([asked.id]);

      await removeMember(t, sup, S, supAdmin.membershipId);
      const ob2 = await createOrderBook(t, buyer, B, 'Approver left 2', [text('sku')]);
      const again = await bind(ob2, conn);
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
      const [creator] = await registerMembers(t, owner, O, ['member']);
      const { conn } = await shareCatalog(t, sup, S, 'Decision', [text('sku')], {
        accessControl: 'approval',
      });
      const ob = await createOrderBook(t, creator, O, 'Decision', [text('sku')]);
      const binding = await bind(ob, conn, {}, creator, O);
      await removeMember(t, owner, O, creator.membershipId);
      await decide(conn, binding.id, 'approve');
      expect(await mailsTo(creator.email, 'binding_approved')).toEqual([]);
      expect((await mailsTo(owner.email, 'binding_approved')).map((mail) => mail.data.bindingId)).toEqual([
        binding.id,
      ]);
    });
  });
});
