import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  connectInfo,
  listen,
  openStream,
  REALTIME_TEST_ENV,
  realtimePath,
  TestSocket,
  waitFor,
} from '../realtime/realtime.fixtures.js';
import { WebhookReceiver } from '../webhooks/webhook-receiver.js';
import { createWebhook, WEBHOOK_TEST_ENV } from '../webhooks/webhooks.fixtures.js';
import {
  addToWorkspace,
  API,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  newUser,
  valueOf,
} from './documents.fixtures.js';

interface RowDto {
  id: string;
  values: { fieldId: string; value: Record<string, unknown> }[];
}

interface OperationDto {
  type: string;
  target: { kind: string; rowId?: string; fieldId?: string };
  oldValue: { values?: { fieldId: string }[] } | null;
  newValue: { values?: { fieldId: string }[] } | null;
}

const SECRET_SALARY = 123456;

/** A rollup field summing `targetFieldId` over the rows its relation field links. */
function sumOf(id: string, relationFieldId: string, targetFieldId: string): Record<string, unknown> {
  return { id, name: id, type: 'rollup', rollup: { relationFieldId, targetFieldId, agg: 'sum' } };
}
/** Fields of a row that read the restricted document: a lookup, a rollup and a formula over the rollup. */
const DERIVED = ['sal', 'tot', 'dbl'];

/**
 * Lookups and rollups over a document the reader may not read are hidden from that reader wherever row values leave
 * the service, not only in row reads (docs/formulas.md, "Access"); relation values cannot link such a document; and
 * a deleted source document hides nothing from current rows (they read as linking to nothing).
 */
describe('documents: values computed from documents the reader may not read', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let secret: DocHandle;
  let pub: DocHandle;

  const ws = (): { workspaceId: string } => ({ workspaceId: owner.defaultWorkspaceId });
  const ref = (doc: DocHandle, rowId: string): Record<string, string> => ({
    docType: doc.docType,
    docId: doc.docId,
    rowId,
  });
  const fieldIds = (row: { values: { fieldId: string }[] }): string[] =>
    row.values.map((entry) => entry.fieldId);
  const hasNone = (ids: string[]): boolean => DERIVED.every((id) => !ids.includes(id));
  const hasAll = (ids: string[]): boolean => DERIVED.every((id) => ids.includes(id));

  /** A document created by `user` in the owner's workspace. */
  async function documentOf(
    user: TestUser,
    docType: string,
    docId: string,
    fields: unknown[],
  ): Promise<DocHandle> {
    await request(t.http)
      .post(`${API}/doc/${docType}`)
      .set(bearer(user))
      .send({
        id: docId,
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields },
      })
      .expect(201);
    return { docType, docId, path: `${API}/doc/${docType}/${docId}` };
  }

  async function revisions(
    user: TestUser,
    doc: DocHandle,
  ): Promise<{ id: string; changes: OperationDto[] }[]> {
    return (await request(t.http).get(`${doc.path}/revisions`).query(ws()).set(bearer(user)).expect(200)).body
      .payload.items;
  }

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV, ...WEBHOOK_TEST_ENV, LOG_LEVEL: 'error' });
    base = await listen(t);
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    secret = await createDocument(t.http, owner, {
      docType: 'leak-secret',
      fields: [{ id: 'salary', name: 'Salary', type: 'number' }],
    });
    await createRow(t.http, owner, secret, { id: 'e1', values: { salary: SECRET_SALARY } });
    await request(t.http)
      .put(`${secret.path}/settings`)
      .query(ws())
      .set(bearer(owner))
      .send({ permissions: { view: [owner.id] } })
      .expect(200);
    pub = await createDocument(t.http, owner, {
      docType: 'leak-pub',
      fields: [
        { id: 'who', name: 'Who', type: 'text' },
        { id: 'emp', name: 'Emp', type: 'relation' },
        {
          id: 'sal',
          name: 'Sal',
          type: 'lookup',
          lookup: { relationFieldId: 'emp', targetFieldId: 'salary' },
        },
        sumOf('tot', 'emp', 'salary'),
        { id: 'dbl', name: 'Dbl', type: 'formula', formula: '{tot} * 2' },
      ],
    });
    await createRow(t.http, owner, pub, { id: 'x1', values: { who: 'one', emp: [ref(secret, 'e1')] } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses relation values naming rows of a document the writer may not read, as POST /relations does, without telling which rows exist', async () => {
    const viaRelations = await request(t.http)
      .post(`${API}/relations`)
      .query(ws())
      .set(bearer(editor))
      .send({
        type: 'knows',
        source: { docType: pub.docType, docId: pub.docId, rowId: 'x1' },
        target: ref(secret, 'e1'),
      })
      .expect(403);
    const existing = await request(t.http)
      .post(`${pub.path}/data`)
      .query(ws())
      .set(bearer(editor))
      .send({ id: 'probe1', values: { who: 'probe', emp: [ref(secret, 'e1')] } })
      .expect(403);
    const missing = await request(t.http)
      .post(`${pub.path}/data`)
      .query(ws())
      .set(bearer(editor))
      .send({ id: 'probe2', values: { who: 'probe', emp: [ref(secret, 'no-such-row')] } })
      .expect(403);
    expect(existing.body.code).toBe('FORBIDDEN');
    expect(existing.body.code).toBe(viaRelations.body.code);
    expect(existing.body.details).toEqual(viaRelations.body.details);
    expect(missing.body).toEqual(existing.body);
    expect(JSON.stringify(missing.body)).not.toContain('does not exist');

    // Nor through a document of the editor's own with a lookup over it.
    const spy = await documentOf(editor, 'leak-spy', 'spy', [
      { id: 'l', name: 'L', type: 'relation' },
      { id: 'v', name: 'V', type: 'lookup', lookup: { relationFieldId: 'l', targetFieldId: 'salary' } },
    ]);
    const spied = await request(t.http)
      .post(`${spy.path}/data`)
      .query(ws())
      .set(bearer(editor))
      .send({ id: 'z', values: { l: [ref(secret, 'e1')] } })
      .expect(403);
    expect(spied.body.code).toBe('FORBIDDEN');
    expect(JSON.stringify(spied.body)).not.toContain(String(SECRET_SALARY));
    const bulk = await request(t.http)
      .post(`${pub.path}/data/bulk`)
      .query(ws())
      .set(bearer(editor))
      .send([
        { target: { row: 'x1', field: 'emp' }, value: { relation: [ref(secret, 'e1'), ref(secret, 'e2')] } },
      ])
      .expect(403);
    expect(JSON.stringify(bulk.body)).not.toContain('does not exist');

    // A reference the row already holds is not asked again: the row sent back as read is written.
    const read = (
      await request(t.http).get(`${pub.path}/data/x1`).query(ws()).set(bearer(editor)).expect(200)
    ).body.payload as RowDto;
    const back = await request(t.http)
      .put(`${pub.path}/data/x1`)
      .query(ws())
      .set(bearer(editor))
      .send({
        values: {
          ...Object.fromEntries(read.values.map((entry) => [entry.fieldId, entry.value])),
          who: 'one again',
        },
      })
      .expect(200);
    expect(valueOf(back.body.payload, 'who')).toEqual({ text: 'one again' });
    // Someone who may read it links, and only then is a missing row named.
    const byOwner = await request(t.http)
      .post(`${pub.path}/data`)
      .query(ws())
      .set(bearer(owner))
      .send({ id: 'probe3', values: { emp: [ref(secret, 'no-such-row')] } })
      .expect(400);
    expect(JSON.stringify(byOwner.body)).toContain('row no-such-row does not exist');
  });

  it('leaves hidden values out of write answers, revisions, diffs, history and the export, and shows them to the owner', async () => {
    await createRow(t.http, owner, pub, { id: 'x2', values: { who: 'two', emp: [ref(secret, 'e1')] } });
    await createRow(t.http, owner, pub, { id: 'x3', values: { who: 'three', emp: [ref(secret, 'e1')] } });
    // Write answers.
    const byEditor = await request(t.http)
      .put(`${pub.path}/data/x1`)
      .query(ws())
      .set(bearer(editor))
      .send({ values: { who: 'edited' } })
      .expect(200);
    expect(hasNone(fieldIds(byEditor.body.payload))).toBe(true);
    expect(JSON.stringify(byEditor.body)).not.toContain(String(SECRET_SALARY));
    const byOwner = await request(t.http)
      .put(`${pub.path}/data/x1`)
      .query(ws())
      .set(bearer(owner))
      .send({ values: { who: 'edited again' } })
      .expect(200);
    expect(valueOf(byOwner.body.payload, 'sal')).toEqual({ list: [SECRET_SALARY] });
    expect(valueOf(byOwner.body.payload, 'dbl')).toEqual({ number: SECRET_SALARY * 2 });
    const created = await request(t.http)
      .post(`${pub.path}/data`)
      .query(ws())
      .set(bearer(editor))
      .send({ id: 'x4', values: { who: 'four' } })
      .expect(201);
    expect(fieldIds(created.body.payload)).toEqual(['who']);

    // Revision operations: the row-delete's old values, and the diff's deleted row.
    await request(t.http).delete(`${pub.path}/data/x2`).query(ws()).set(bearer(editor)).expect(200);
    const [asEditor] = await revisions(editor, pub);
    const [asOwner] = await revisions(owner, pub);
    const deletedOf = (revision: { changes: OperationDto[] }): string[] =>
      fieldIds({ values: revision.changes.find((op) => op.type === 'row-delete')?.oldValue?.values ?? [] });
    expect(hasNone(deletedOf(asEditor))).toBe(true);
    expect(deletedOf(asEditor)).toContain('who');
    expect(hasAll(deletedOf(asOwner))).toBe(true);
    const single = (
      await request(t.http)
        .get(`${pub.path}/revisions/${asEditor.id}`)
        .query(ws())
        .set(bearer(editor))
        .expect(200)
    ).body.payload;
    const operations = (
      await request(t.http)
        .get(`${pub.path}/revisions/${asEditor.id}/operations`)
        .query(ws())
        .set(bearer(viewer))
        .expect(200)
    ).body.payload;
    const history = (
      await request(t.http)
        .get(`${pub.path}/revisions/history`)
        .query({ ...ws(), rowId: 'x2' })
        .set(bearer(viewer))
        .expect(200)
    ).body.payload;
    const diffOf = async (user: TestUser): Promise<{ deletedRows: RowDto[] }> =>
      (
        await request(t.http)
          .get(`${pub.path}/revisions/${asEditor.id}/diff`)
          .query(ws())
          .set(bearer(user))
          .expect(200)
      ).body.payload;
    const bundle = (
      await request(t.http)
        .get(pub.path)
        .query({ ...ws(), include: 'revisions,data' })
        .set(bearer(viewer))
        .expect(200)
    ).body.payload;
    for (const answer of [single, operations, history, await diffOf(viewer), bundle]) {
      expect(JSON.stringify(answer)).not.toContain(String(SECRET_SALARY));
    }
    expect(hasAll(fieldIds((await diffOf(owner)).deletedRows[0]))).toBe(true);

    // A request merged by the editor: its diff and the merge answer's revision.
    const opened = await request(t.http)
      .post(`${pub.path}/requests`)
      .query(ws())
      .set(bearer(editor))
      .send({ title: 'drop x3', changes: [{ type: 'row-delete', target: { kind: 'row', rowId: 'x3' } }] })
      .expect(201);
    const merged = await request(t.http)
      .post(`${pub.path}/requests/${opened.body.payload.id}/merge`)
      .query(ws())
      .set(bearer(editor))
      .expect(200);
    expect(merged.body.payload.revision.changes.some((op: OperationDto) => op.type === 'row-delete')).toBe(
      true,
    );
    expect(JSON.stringify(merged.body)).not.toContain(String(SECRET_SALARY));
    const requestDiff = await request(t.http)
      .get(`${pub.path}/requests/${opened.body.payload.id}/diff`)
      .query(ws())
      .set(bearer(editor))
      .expect(200);
    expect(requestDiff.body.payload.deletedRows).toHaveLength(1);
    expect(JSON.stringify(requestDiff.body)).not.toContain(String(SECRET_SALARY));

    // The point-in-time export (the revision before x2 went) and its operations.
    const [, , beforeDelete] = await revisions(owner, pub);
    const exportAs = async (
      user: TestUser,
      query: Record<string, string>,
      revisionId = beforeDelete.id,
    ): Promise<string> =>
      (
        await request(t.http)
          .get(`${pub.path}/revisions/${revisionId}/export`)
          .query({ ...ws(), ...query })
          .set(bearer(user))
          .expect(200)
      ).text;
    const csv = await exportAs(viewer, { format: 'csv' });
    expect(csv.split('\n')[0]).toBe('id,who,emp');
    expect(csv).toContain('x2,');
    expect(csv).not.toContain(String(SECRET_SALARY));
    expect(await exportAs(viewer, { format: 'json' })).not.toContain(String(SECRET_SALARY));
    expect(await exportAs(viewer, { format: 'csv', what: 'changes' }, asEditor.id)).not.toContain(
      String(SECRET_SALARY),
    );
    const ownerCsv = await exportAs(owner, { format: 'csv' });
    expect(ownerCsv.split('\n')[0]).toBe('id,who,emp,sal,tot,dbl');
    expect(ownerCsv).toContain(String(SECRET_SALARY * 2));
  });

  it('follows lookups through a readable document, and draft relation values no merge has followed yet', async () => {
    // The editor may read pub, but its `dbl` comes from the restricted document: a lookup of it is hidden too.
    const relay = await documentOf(editor, 'leak-relay', 'relay', [
      { id: 'p', name: 'P', type: 'relation' },
      { id: 'd', name: 'D', type: 'lookup', lookup: { relationFieldId: 'p', targetFieldId: 'dbl' } },
      { id: 'w', name: 'W', type: 'lookup', lookup: { relationFieldId: 'p', targetFieldId: 'who' } },
    ]);
    const written = await request(t.http)
      .post(`${relay.path}/data`)
      .query(ws())
      .set(bearer(editor))
      .send({ id: 'r1', values: { p: [ref(pub, 'x1')] } })
      .expect(201);
    expect(fieldIds(written.body.payload)).toEqual(['p', 'w']);
    const read = (
      await request(t.http).get(`${relay.path}/data/r1`).query(ws()).set(bearer(editor)).expect(200)
    ).body.payload as RowDto;
    expect(fieldIds(read)).toEqual(['p', 'w']);
    expect(
      valueOf(
        (await request(t.http).get(`${relay.path}/data/r1`).query(ws()).set(bearer(owner)).expect(200)).body
          .payload,
        'd',
      ),
    ).toEqual({
      list: [SECRET_SALARY * 2],
    });

    // An open request of the owner links a relation field no merged lookup has followed yet.
    const fresh = await documentOf(owner, 'leak-fresh', 'fresh', [
      { id: 'f', name: 'F', type: 'relation' },
      { id: 'fs', name: 'FS', type: 'lookup', lookup: { relationFieldId: 'f', targetFieldId: 'salary' } },
    ]);
    const draft = await request(t.http)
      .post(`${fresh.path}/requests`)
      .query(ws())
      .set(bearer(owner))
      .send({
        title: 'draft',
        changes: [
          { type: 'row-create', target: { kind: 'row', rowId: 'd1' }, newValue: { f: [ref(secret, 'e1')] } },
        ],
      })
      .expect(201);
    const draftRead = async (user: TestUser): Promise<string> =>
      JSON.stringify(
        (
          await request(t.http)
            .get(`${fresh.path}/data`)
            .query({ ...ws(), requestId: draft.body.payload.id })
            .set(bearer(user))
            .expect(200)
        ).body,
      );
    expect(await draftRead(owner)).toContain(String(SECRET_SALARY));
    expect(await draftRead(editor)).not.toContain(String(SECRET_SALARY));
    const requestDiff = await request(t.http)
      .get(`${fresh.path}/requests/${draft.body.payload.id}/diff`)
      .query(ws())
      .set(bearer(editor))
      .expect(200);
    expect(requestDiff.body.payload.addedRows).toHaveLength(1);
    expect(JSON.stringify(requestDiff.body)).not.toContain(String(SECRET_SALARY));
  });

  it('delivers events to realtime subscribers and webhooks without the values their reader may not see', async () => {
    const receiver = await new WebhookReceiver().start();
    try {
      const events = ['data_row_created', 'data_row_updated'];
      const editorHook = await createWebhook(t, editor, {
        organizationId: owner.defaultOrganizationId,
        url: receiver.url,
        events,
      });
      const ownerHook = await createWebhook(t, owner, {
        organizationId: owner.defaultOrganizationId,
        url: receiver.url,
        events,
      });
      // A condition on a hidden value must not tell it by whether the event arrives.
      const probeHook = await createWebhook(t, editor, {
        organizationId: owner.defaultOrganizationId,
        url: receiver.url,
        events,
        filters: { conditions: [{ path: '$.payload.values[*].fieldId', operator: 'eq', value: 'tot' }] },
      });
      const streamUrl = `${base}${realtimePath(pub, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;
      const editorStream = openStream(streamUrl, editor.token);
      const ownerStream = openStream(streamUrl, owner.token);
      const info = await connectInfo(t.http, editor, pub, owner.defaultWorkspaceId);
      const socket = await TestSocket.connect(
        info.wsUrl.replace(/^ws:\/\/[^/]+/, base.replace('http', 'ws')),
        editor.token,
      );
      await waitFor(() => editorStream.opened() === 1 && ownerStream.opened() === 1, 15_000, 'streams open');

      await createRow(t.http, owner, pub, { id: 'x5', values: { who: 'five', emp: [ref(secret, 'e1')] } });
      const createdIn = (received: { type: string; data: Record<string, unknown> }[]) =>
        received.find(
          (event) =>
            event.type === 'data_row_created' && (event.data.payload as { rowId: string }).rowId === 'x5',
        )?.data;
      await waitFor(
        () => createdIn(editorStream.events) !== undefined && createdIn(ownerStream.events) !== undefined,
        15_000,
        'stream events',
      );
      const socketEvent = (): Record<string, unknown> | undefined =>
        socket
          .pushed('event')
          .find(
            (event) =>
              event.event === 'data_row_created' && (event.payload as { rowId: string }).rowId === 'x5',
          );
      await waitFor(() => socketEvent() !== undefined, 15_000, 'socket event');
      const valuesOf = (event: Record<string, unknown> | undefined): string[] =>
        fieldIds(event?.payload as RowDto);
      expect(valuesOf(createdIn(ownerStream.events))).toEqual(['who', 'emp', 'sal', 'tot', 'dbl']);
      expect(valuesOf(createdIn(editorStream.events))).toEqual(['who', 'emp']);
      expect(valuesOf(socketEvent())).toEqual(['who', 'emp']);
      editorStream.es.close();
      ownerStream.es.close();
      socket.close();

      // The event history.
      const log = await request(t.http)
        .get(realtimePath(pub, 'events'))
        .query({ ...ws(), pageSize: 100 })
        .set(bearer(viewer))
        .expect(200);
      expect(log.body.payload.items.length).toBeGreaterThan(0);
      expect(JSON.stringify(log.body)).not.toContain(String(SECRET_SALARY));

      const deliveredTo = (hookId: string) =>
        receiver.received.find(
          (got) =>
            got.body.webhookId === hookId &&
            got.body.event === 'data_row_created' &&
            got.body.payload.rowId === 'x5',
        )?.body;
      await waitFor(
        () => deliveredTo(editorHook.id) !== undefined && deliveredTo(ownerHook.id) !== undefined,
        10_000,
        'webhook deliveries',
      );
      expect(valuesOf(deliveredTo(ownerHook.id))).toEqual(['who', 'emp', 'sal', 'tot', 'dbl']);
      expect(valuesOf(deliveredTo(editorHook.id))).toEqual(['who', 'emp']);
      expect(
        receiver.received
          .filter((got) => got.body.webhookId === editorHook.id)
          .map((got) => got.rawBody)
          .join(),
      ).not.toContain(String(SECRET_SALARY));
      expect(receiver.received.some((got) => got.body.webhookId === probeHook.id)).toBe(false);
    } finally {
      await receiver.stop();
    }
  });

  it("records participants' notifications without the values their recipient may not see", async () => {
    // The editor creates the document, so it is a participant told of data changes.
    const notes = await documentOf(editor, 'leak-notes', 'n1', [
      { id: 'who', name: 'Who', type: 'text' },
      { id: 'emp', name: 'Emp', type: 'relation' },
      { id: 'sal', name: 'Sal', type: 'lookup', lookup: { relationFieldId: 'emp', targetFieldId: 'salary' } },
    ]);
    await request(t.http)
      .put(`${notes.path}/settings`)
      .query(ws())
      .set(bearer(owner))
      .send({ notifications: { onDataChange: true } })
      .expect(200);
    await createRow(t.http, owner, notes, { id: 'n1', values: { who: 'one', emp: [ref(secret, 'e1')] } });
    const recorded = async (): Promise<{ data: { payload: RowDto } }[]> =>
      t.dataSource.query(
        `SELECT data FROM notifications WHERE user_id = $1 AND kind = 'document_data_changed' AND data->>'docId' = $2`,
        [editor.id, notes.docId],
      );
    await waitFor(async () => (await recorded()).length > 0, 15_000, 'notification recorded');
    const [first] = await recorded();
    expect(fieldIds(first!.data.payload)).toEqual(['who', 'emp']);
    expect(JSON.stringify(await recorded())).not.toContain(String(SECRET_SALARY));
  });

  it('leaves out property formulas aggregating a hidden rollup, and those reading them, in GET /properties, write answers and the export', async () => {
    const budgeted = await createDocument(t.http, owner, {
      docType: 'leak-props',
      fields: [{ id: 'emp', name: 'Emp', type: 'relation' }, sumOf('tot', 'emp', 'salary')],
      properties: [
        { id: 'budget', name: 'Budget', type: 'number' },
        { id: 'spent', name: 'Spent', type: 'formula', formula: 'SUM({tot})' },
        { id: 'left', name: 'Left', type: 'formula', formula: '{budget} - {spent}' },
        { id: 'rows', name: 'Rows', type: 'formula', formula: 'COUNT(*)' },
        { id: 'half', name: 'Half', type: 'formula', formula: '{budget} / 2' },
      ],
    });
    await createRow(t.http, owner, budgeted, { id: 'b1', values: { emp: [ref(secret, 'e1')] } });
    const written = await request(t.http)
      .patch(`${budgeted.path}/properties`)
      .query(ws())
      .set(bearer(editor))
      .send({ properties: { budget: 1000000 } })
      .expect(200);
    const ids = (body: { properties: { fieldId: string }[] }): string[] =>
      body.properties.map((entry) => entry.fieldId).sort();
    // The editor's own write answer: budget and what reads only visible values, not the sum of hidden salaries.
    expect(ids(written.body.payload)).toEqual(['budget', 'half', 'rows']);
    expect(JSON.stringify(written.body)).not.toContain(String(SECRET_SALARY));
    expect(JSON.stringify(written.body)).not.toContain(String(1000000 - SECRET_SALARY));
    for (const reader of [editor, viewer]) {
      const read = await request(t.http)
        .get(`${budgeted.path}/properties`)
        .query(ws())
        .set(bearer(reader))
        .expect(200);
      expect(ids(read.body.payload)).toEqual(['budget', 'half', 'rows']);
    }
    const ownerRead = await request(t.http)
      .get(`${budgeted.path}/properties`)
      .query(ws())
      .set(bearer(owner))
      .expect(200);
    expect(ownerRead.body.payload.properties).toEqual(
      expect.arrayContaining([
        { fieldId: 'spent', value: { number: SECRET_SALARY } },
        { fieldId: 'left', value: { number: 1000000 - SECRET_SALARY } },
        { fieldId: 'rows', value: { number: 1 } },
      ]),
    );
    const revisionId: string = written.body.payload.request.revisionId;
    const exported = async (user: TestUser): Promise<{ properties: { fieldId: string }[] }> =>
      JSON.parse(
        (
          await request(t.http)
            .get(`${budgeted.path}/revisions/${revisionId}/export`)
            .query(ws())
            .set(bearer(user))
            .expect(200)
        ).text,
      );
    const viewerExport = await exported(viewer);
    expect(ids(viewerExport)).toEqual(['budget', 'half', 'rows']);
    expect(JSON.stringify(viewerExport)).not.toContain(String(SECRET_SALARY));
    expect(ids(await exported(owner))).toEqual(['budget', 'half', 'left', 'rows', 'spent']);
  });

  it('keeps lookups and rollups over a deleted document visible, as linking to nothing, and still hides recorded values', async () => {
    const c = await createDocument(t.http, owner, {
      docType: 'leak-c',
      fields: [{ id: 'v', name: 'V', type: 'number' }],
    });
    const b = await createDocument(t.http, owner, {
      docType: 'leak-b',
      fields: [
        { id: 'toC', name: 'toC', type: 'relation' },
        sumOf('cv', 'toC', 'v'),
        { id: 'bf', name: 'bf', type: 'formula', formula: '{cv} + 1' },
      ],
    });
    await createRow(t.http, owner, c, { id: 'c1', values: { v: 5 } });
    await createRow(t.http, owner, b, { id: 'b1', values: { toC: [ref(c, 'c1')] } });
    await request(t.http).delete(c.path).query(ws()).set(bearer(owner)).expect(200);
    for (const user of [owner, viewer]) {
      const row = (await request(t.http).get(`${b.path}/data/b1`).query(ws()).set(bearer(user)).expect(200))
        .body.payload as RowDto;
      expect(valueOf(row, 'cv')).toEqual({ number: 0 });
      expect(valueOf(row, 'bf')).toEqual({ number: 1 });
      const sorted = await request(t.http)
        .post(`${b.path}/data/query`)
        .query(ws())
        .set(bearer(user))
        .send({
          sorts: [{ field: 'cv', direction: 'asc' }],
          filters: { logic: 'and', conditions: [{ field: 'bf', operator: 'eq', value: 1 }] },
        })
        .expect(200);
      expect(sorted.body.payload.items.map((item: RowDto) => item.id)).toEqual(['b1']);
    }
    const created = await request(t.http)
      .post(`${b.path}/data`)
      .query(ws())
      .set(bearer(owner))
      .send({ id: 'b2', values: {} })
      .expect(201);
    const fetched = (
      await request(t.http).get(`${b.path}/data/b2`).query(ws()).set(bearer(owner)).expect(200)
    ).body.payload as RowDto;
    expect(fetched.values).toEqual(created.body.payload.values);
    expect(valueOf(fetched, 'bf')).toEqual({ number: 1 });

    // The restricted document deleted: current rows show its lookups empty to everyone; what history recorded of it
    // stays hidden from whoever could not read it.
    await request(t.http).delete(secret.path).query(ws()).set(bearer(owner)).expect(200);
    const x1 = (await request(t.http).get(`${pub.path}/data/x1`).query(ws()).set(bearer(editor)).expect(200))
      .body.payload as RowDto;
    expect(valueOf(x1, 'tot')).toEqual({ number: 0 });
    expect(valueOf(x1, 'dbl')).toEqual({ number: 0 });
    const history = (
      await request(t.http)
        .get(`${pub.path}/revisions/history`)
        .query({ ...ws(), rowId: 'x2' })
        .set(bearer(editor))
        .expect(200)
    ).body;
    expect(JSON.stringify(history)).not.toContain(String(SECRET_SALARY));
    const ownerHistory = (
      await request(t.http)
        .get(`${pub.path}/revisions/history`)
        .query({ ...ws(), rowId: 'x2' })
        .set(bearer(owner))
        .expect(200)
    ).body;
    expect(JSON.stringify(ownerHistory)).toContain(String(SECRET_SALARY));
  });
});
