/**
 * Records and configuration shapes of the supply-chain resources (docs/supply-chain.md). The configuration
 * types are what the validators in dtos/sync-config.validation.ts return: normalized, defaults filled in.
 */

export const CONNECTION_STATUSES = ['active', 'paused', 'disabled'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

export const BINDING_STATUSES = ['pending', 'active', 'rejected'] as const;
export type BindingStatus = (typeof BINDING_STATUSES)[number];

export const ACCESS_MODES = ['public', 'whitelist', 'approval'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

/** How a binding was let in: the connection's mode, or a share link (approval by the supplier follows). */
export const ADMISSIONS = ['public', 'whitelist', 'approval', 'share_link'] as const;
export type Admission = (typeof ADMISSIONS)[number];

export const PROPAGATION_EVENT_TYPES = [
  'row_created',
  'row_updated',
  'row_deleted',
  'field_value_changed',
] as const;
export type PropagationEventType = (typeof PROPAGATION_EVENT_TYPES)[number];

export const FILTER_LOGICS = ['AND', 'OR'] as const;
export type FilterLogic = (typeof FILTER_LOGICS)[number];

/** Condition operators: the spec's query operators (2.12) plus the short-form comparisons. */
export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'in',
  'notIn',
  'gt',
  'gte',
  'lt',
  'lte',
  'range',
  'contains',
  'exists',
  'startsWith',
  'endsWith',
  'is_empty',
  'is_not_empty',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface FilterCondition {
  /** A field id of the document the filter runs on (`field` is accepted as an alias on input). */
  fieldId: string;
  operator: FilterOperator;
  /** Scalar for comparisons; for `in`/`notIn` an array; for `range` a two-element array [min, max]. */
  value?: unknown;
}

export interface FilterGroup {
  /** `operator` on input (`logic` accepted too), upper- or lower-case. */
  operator: FilterLogic;
  conditions: FilterCondition[];
  groups: FilterGroup[];
}

export const TRANSFORM_TYPES = [
  'direct',
  'type_convert',
  'unit_convert',
  'option_mapping',
  'formula',
  'format',
  'merge',
  'split',
] as const;
export type TransformType = (typeof TRANSFORM_TYPES)[number];

export const PROPAGATION_MODES = ['oneway', 'sync'] as const;
export type PropagationMode = (typeof PROPAGATION_MODES)[number];

export const UNMAPPED_FIELDS = ['create', 'ignore'] as const;
export type UnmappedFields = (typeof UNMAPPED_FIELDS)[number];

export const CONVERSION_TYPES = ['currency', 'weight', 'length'] as const;
export type ConversionType = (typeof CONVERSION_TYPES)[number];

export const EXCHANGE_RATE_SOURCES = ['daily', 'realtime'] as const;
export type ExchangeRateSource = (typeof EXCHANGE_RATE_SOURCES)[number];

export const UNMAPPED_OPTION_STRATEGIES = ['keep_original', 'clear'] as const;
export type UnmappedOptionStrategy = (typeof UNMAPPED_OPTION_STRATEGIES)[number];

/**
 * Unit conversion, either form of the spec: `{sourceUnit, targetUnit, conversionType, exchangeRateSource,
 * fixedRate | customRate}` or `{fromUnit, toUnit, rate}`. Normalized: `sourceUnit`/`targetUnit` always set;
 * `rate` is the explicit factor when one was given (`rate`, `fixedRate` or `customRate`, in that order).
 */
export interface UnitConversion {
  sourceUnit: string;
  targetUnit: string;
  conversionType?: ConversionType;
  exchangeRateSource?: ExchangeRateSource;
  fixedRate?: number;
  customRate?: number;
  rate?: number;
}

export interface OptionMapping {
  mappings: Record<string, string>;
  unmappedStrategy: UnmappedOptionStrategy;
}

export interface FieldMappingRule {
  /** The source field (for `merge`: the first of `sourceFieldIds`). */
  sourceFieldId: string;
  /** `merge` only: every source field, in order (at least two). */
  sourceFieldIds?: string[];
  /** The target field (for `split`: the first of `targetFieldIds`). */
  targetFieldId: string;
  /** `split` only: every target field, in order (at least two). */
  targetFieldIds?: string[];
  /** `merge` / `split`: the joiner / delimiter (default a single space). */
  separator?: string;
  enabled: boolean;
  description?: string;
  transformType: TransformType;
  propagationMode: PropagationMode;
  unitConversion?: UnitConversion;
  /** `format`: a template with `${value}`. */
  formatConfig?: { template: string };
  optionMapping?: OptionMapping;
  /** `formula`: our formula language over the source row (field ids as names). */
  formula?: string;
  /** `type_convert`: the target type (default: the target field's type). */
  targetType?: string;
}

export interface FieldMapping {
  rules: FieldMappingRule[];
  unmappedFields: UnmappedFields;
}

export const ACCEPT_MODES = ['auto', 'selective', 'manual'] as const;
export type AcceptMode = (typeof ACCEPT_MODES)[number];

export const DEFAULT_ACTIONS = ['manual', 'accept'] as const;
export type DefaultAction = (typeof DEFAULT_ACTIONS)[number];

export const DEDUPLICATION_STRATEGIES = ['by_field', 'by_fields'] as const;
export type DeduplicationStrategy = (typeof DEDUPLICATION_STRATEGIES)[number];

export interface ManualAcceptRules {
  autoAcceptIf?: FilterGroup;
  requireApprovalIf?: FilterGroup;
  autoRejectIf?: FilterGroup;
  defaultAction: DefaultAction;
}

/**
 * Receiver filter of a binding. `filterGroup` and the accept rules run on the **source** (catalog) row, before the
 * mapping; `deduplicationFieldIds` are **order-book** field ids: a catalog row maps to the order-book row whose
 * values in those fields equal the mapped values (by_field: exactly one id; by_fields: one or more, all equal).
 * Without a deduplication strategy the order-book row is the one created for that catalog row before.
 */
export interface ReceiverFilter {
  filterGroup?: FilterGroup;
  acceptMode: AcceptMode;
  manualAcceptRules?: ManualAcceptRules;
  deduplicationStrategy?: DeduplicationStrategy;
  deduplicationFieldIds?: string[];
}

export const CONFLICT_STRATEGIES = ['keep_upstream', 'keep_local', 'latest_wins'] as const;
export type ConflictStrategy = (typeof CONFLICT_STRATEGIES)[number];

export interface ConflictResolution {
  defaultStrategy: ConflictStrategy;
  fieldStrategies: Record<string, { strategy: ConflictStrategy }>;
}

export type ShareScope = { type: 'all' } | { type: 'filter'; filterGroup: FilterGroup };

export interface AccessControl {
  mode: AccessMode;
  /** Organization ids; meaningful for `whitelist` (admitted at once) and `approval` (may ask without a code). */
  allowedOrganizations: string[];
}

export interface PropagationEvents {
  eventTypes: PropagationEventType[];
  batchMerge: boolean;
  batchWindowSeconds: number;
}

export interface DefaultReceiverConfig {
  suggestedFieldMapping?: FieldMapping;
  suggestedAcceptMode?: AcceptMode;
}

export const CONNECTOR_TYPES = ['orderbook_to_catalog', 'catalog_clone'] as const;
export type ConnectorType = (typeof CONNECTOR_TYPES)[number];

export const SYNC_MODES = ['realtime', 'scheduled'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

export const CONNECTOR_CONFLICT_RESOLUTIONS = ['source_wins'] as const;
export type ConnectorConflictResolution = (typeof CONNECTOR_CONFLICT_RESOLUTIONS)[number];

export interface ConnectorConfig {
  fieldMapping: FieldMapping;
  sourceFilter?: FilterGroup;
  syncMode: SyncMode;
  scheduleConfig?: { cron: string; timezone: string };
  conflictResolution: ConnectorConflictResolution;
  bidirectional: boolean;
}

/** A field of a catalog or an order book, as the supply-chain routes show it (a document metadata field). */
export interface ScField {
  id: string;
  name: string;
  type: string;
  required?: boolean;
  description?: string;
  selectOptions?: Array<{ id: string; label?: string; color?: string }>;
}

/** An order-book field generated from a connection's catalog field. */
export interface GeneratedField {
  id: string;
  name: string;
  type: string;
  sourceCatalogId: string;
  sourceFieldId: string;
  connectionId: string;
}

export interface CatalogRecord {
  id: string;
  organizationId: string;
  /** `documents.id` of the organization-level document `catalog/{id}`. */
  documentId: string;
  name: string;
  description: string | null;
  catalogType: string;
  sharingEnabled: boolean;
  /** Field id → description (document metadata fields have no description). */
  fieldDescriptions: Record<string, string>;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrderBookRecord {
  id: string;
  organizationId: string;
  /** `documents.id` of the organization-level document `orderbook/{id}`. */
  documentId: string;
  name: string;
  description: string | null;
  generatedFields: GeneratedField[];
  /** Field id → description of the custom fields. */
  fieldDescriptions: Record<string, string>;
  sourceConnectionIds: string[];
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ConnectionRecord {
  id: string;
  /** The supplier. */
  organizationId: string;
  catalogId: string;
  name: string;
  description: string | null;
  shareMode: string;
  accessControl: AccessControl;
  shareScope: ShareScope;
  defaultReceiverConfig: DefaultReceiverConfig | null;
  propagationEvents: PropagationEvents;
  status: ConnectionStatus;
  createdBy: string;
  updatedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  pausedAt: Date | null;
  disabledAt: Date | null;
}

export interface ShareLinkRecord {
  id: string;
  organizationId: string;
  connectionId: string;
  expiresAt: Date | null;
  maxUses: number | null;
  uses: number;
  revokedAt: Date | null;
  createdBy: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface BindingRecord {
  id: string;
  /** The buyer. */
  organizationId: string;
  orderBookId: string;
  connectionId: string;
  supplierOrganizationId: string;
  catalogId: string;
  fieldMapping: FieldMapping;
  receiverFilter: ReceiverFilter;
  conflictResolution: ConflictResolution;
  status: BindingStatus;
  admittedVia: Admission;
  shareLinkId: string | null;
  reviewNote: string | null;
  reviewedBy: string | null;
  reviewedAt: Date | null;
  activatedAt: Date | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export const SYNC_REQUEST_STATUSES = ['pending', 'accepted', 'rejected'] as const;
export type SyncRequestStatus = (typeof SYNC_REQUEST_STATUSES)[number];

export const SYNC_CHANGE_OPERATIONS = ['create_row', 'update_row', 'delete_row'] as const;
export type SyncChangeOperation = (typeof SYNC_CHANGE_OPERATIONS)[number];

/** One row change of a sync request; `values` are order-book ValueEntries (or a field id → value object). */
export interface SyncChange {
  operation: SyncChangeOperation;
  /** Order-book row id: given for update/delete; for create, generated when absent. */
  rowId?: string;
  values?: unknown;
  /** The catalog row it came from, when propagated. */
  sourceRowId?: string;
}

export interface SyncRequestRecord {
  id: string;
  organizationId: string;
  orderBookId: string;
  bindingId: string | null;
  requestType: string;
  source: Record<string, unknown>;
  changes: SyncChange[];
  status: SyncRequestStatus;
  message: string | null;
  /** The document request (on `orderbook/{id}`) carrying the changes: merged when accepted, open while pending. */
  documentRequestId: string | null;
  productInfo: Record<string, unknown> | null;
  /** The note of the buyer's accept or reject, if any. */
  reviewNote: string | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export const SYNC_LOG_OUTCOMES = [
  'accepted',
  'pending',
  'rejected',
  'filtered',
  'conflict',
  'error',
  'skipped',
] as const;
export type SyncLogOutcome = (typeof SYNC_LOG_OUTCOMES)[number];

export interface SyncLogRecord {
  id: string;
  organizationId: string;
  orderBookId: string;
  bindingId: string | null;
  connectionId: string | null;
  catalogId: string | null;
  catalogRevisionId: string | null;
  catalogRevisionVersion: number | null;
  eventType: string | null;
  sourceRowId: string | null;
  targetRowId: string | null;
  outcome: SyncLogOutcome;
  reason: string | null;
  syncRequestId: string | null;
  details: Record<string, unknown> | null;
  createdAt: Date;
}

export interface ConnectorRecord {
  id: string;
  organizationId: string;
  name: string;
  connectorType: ConnectorType;
  sourceDocType: string;
  sourceDocId: string;
  /** `documents.id` of the source. */
  sourceDocumentId: string;
  targetDocType: string;
  targetDocId: string;
  targetDocumentId: string;
  config: ConnectorConfig;
  syncMode: SyncMode;
  scheduleCron: string | null;
  scheduleTimezone: string | null;
  bidirectional: boolean;
  status: 'active' | 'paused';
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}
