import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBase64,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { DocumentScopeQueryDto, PagedScopeQueryDto } from '../../documents/dtos/document-query.dto.js';
import { LOCK_TARGET_ID, LOCK_TARGET_TYPES, type LockTargetType } from '../domain/lock-targets.js';
import { eventIdProblem } from '../domain/event-id.js';


/** GET /realtime/messages/schema: a JSON Schema (2020-12) document. */
export class RealtimeMessageSchemaDto {
  @ApiProperty({ example: 'https://json-schema.org/draft/2020-12/schema' }) $schema: string;
  @ApiProperty({ example: 'urn:quire:realtime:messages:v1' }) $id: string;
  @ApiProperty() title: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'One `$ref` per message kind, into `$defs`' })
  oneOf: Record<string, unknown>[];
  @ApiProperty({ type: 'object', additionalProperties: true, description: '`client` and `server`: one schema per message kind' })
  $defs: Record<string, unknown>;
}

export class ConnectResponseDto {
  @ApiProperty({
    example: 'ws://localhost:3000/realtime/ws?docType=products&docId=p-1&workspaceId=…',
    description:
      'WebSocket URL; send {kind:"auth", seq, payload:{token}} first. Scheme and host are the request\'s when its ' +
      'host is a host name or address with an optional port, else those of PUBLIC_BASE_URL (docs/realtime.md)',
  })
  wsUrl: string;

  @ApiProperty({ example: 'localhost', description: 'Host name, without the port (`port`)' })
  wsHost: string;

  @ApiProperty({
    example: '/realtime/ws',
    description: 'Path of the socket; wsUrl adds the document (docType, docId and the context) as its query, which a bearer token needs',
  })
  wsPath: string;

  @ApiProperty({ example: 3000 })
  port: number;

  @ApiProperty({
    type: [String],
    example: ['quire.realtime.v1'],
    description:
      'WebSocket sub-protocols: offer none, or this one (a client offering only others gets none selected)',
  })
  protocols: string[];

  @ApiProperty({ description: 'The event stream URL with the connect token, ready for EventSource' })
  sseUrl: string;

  @ApiProperty({
    description:
      'Connect token: bound to this document and user; opens the stream or a socket, never accepted as an API token',
  })
  token: string;

  @ApiProperty({ description: 'Seconds until the token can no longer open a connection' })
  expiresIn: number;
}

export class StreamEventDto {
  @ApiProperty({
    description: "Event id: orders the document's events; the SSE `id:` and `Last-Event-ID`",
    example: '1042',
  })
  id: string;

  @ApiProperty({ format: 'uuid' })
  eventId: string;

  @ApiProperty({ example: 'request_merged', description: 'Event type (spec 6.2)' })
  event: string;

  @ApiProperty({ format: 'date-time' })
  timestamp: string;

  @ApiProperty({ type: String, nullable: true })
  organizationId: string | null;

  @ApiProperty({ type: String, nullable: true })
  workspaceId: string | null;

  @ApiProperty({ type: String, nullable: true })
  docType: string | null;

  @ApiProperty({ type: String, nullable: true })
  docId: string | null;

  @ApiProperty({ type: String, nullable: true })
  triggeredBy: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true })
  payload: Record<string, unknown>;
}

export class OnlineSessionDto {
  @ApiProperty({ format: 'uuid' })
  sessionId: string;

  @ApiProperty({
    enum: ['ws', 'http'],
    description: 'ws: a socket; http: an HTTP awareness client (event streams are not listed)',
  })
  transport: string;

  @ApiProperty({ type: Number, nullable: true, description: 'Yjs awareness client id' })
  clientId: number | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Awareness state (cursor, selection, user)',
  })
  state: Record<string, unknown> | null;

  @ApiProperty({ format: 'date-time' })
  connectedAt: string;

  @ApiProperty({ format: 'date-time' })
  lastSeenAt: string;
}

export class OnlineUserDto {
  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ type: [OnlineSessionDto] })
  sessions: OnlineSessionDto[];
}

export class LockTargetDto {
  @ApiProperty({
    enum: LOCK_TARGET_TYPES,
    description: 'row: rowId; cell: rowId + fieldId; field: fieldId; document: neither',
  })
  @IsIn(LOCK_TARGET_TYPES)
  type: LockTargetType;

  @ApiPropertyOptional({ pattern: LOCK_TARGET_ID.source })
  @IsOptional()
  @Matches(LOCK_TARGET_ID)
  rowId?: string;

  @ApiPropertyOptional({ pattern: LOCK_TARGET_ID.source })
  @IsOptional()
  @Matches(LOCK_TARGET_ID)
  fieldId?: string;
}

export class CreateLockDto {
  @ApiProperty({ type: LockTargetDto })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => LockTargetDto)
  target: LockTargetDto;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'Seconds (default REALTIME_LOCK_DEFAULT_TTL_SECONDS, at most REALTIME_LOCK_MAX_TTL_SECONDS)',
    minimum: 1,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  ttlSeconds?: number;

  @ApiPropertyOptional({
    default: true,
    description: "Exclusive locks refuse others' writes and locks; shared ones only others' exclusive locks",
  })
  @IsOptional()
  @IsBoolean()
  exclusive?: boolean;
}

export class LockDto {
  @ApiProperty({ format: 'uuid' })
  lockId: string;

  @ApiProperty({ type: LockTargetDto })
  target: LockTargetDto;

  @ApiProperty()
  exclusive: boolean;

  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The socket session holding it (the lock dies with it); null for HTTP locks',
  })
  sessionId: string | null;

  @ApiProperty({ format: 'date-time' })
  expiresAt: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class CreateSnapshotDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    example: 'before-import',
    description: 'Default: the time the snapshot is taken (ISO 8601), so a POST without a body takes one',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;
}

/** An event id of the stream (the outbox sequence): see eventIdProblem. */
const IsEventId = (): PropertyDecorator =>
  ValidateBy({
    name: 'isEventId',
    validator: {
      validate: (value: unknown, args) => eventIdProblem(args?.property ?? 'lastEventId', value) === null,
      defaultMessage: (args) =>
        eventIdProblem(args?.property ?? 'lastEventId', args?.value) ?? 'lastEventId must be an event id',
    },
  });

/** `GET .../events/stream`: the document context, the connect token and where to resume; nothing else. */
export class EventStreamQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({
    description:
      'Connect token from /connect (for EventSource, which cannot send headers); otherwise Authorization: Bearer',
    maxLength: 8192,
  })
  @IsOptional()
  @IsString()
  @MaxLength(8192)
  token?: string;

  @ApiPropertyOptional({
    description:
      'Resume after this event id (as the Last-Event-ID header, which wins when both are sent). An id beyond the ' +
      "document's newest event is read as the newest.",
    example: '1042',
  })
  @IsOptional()
  @IsEventId()
  lastEventId?: string;
}

export class SnapshotQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'A named snapshot by id' })
  @IsOptional()
  @IsUUID()
  snapshotId?: string;

  @ApiPropertyOptional({ description: 'The newest snapshot with this name', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class SnapshotListQueryDto extends PagedScopeQueryDto {}

export class SnapshotDto {
  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'Null for the current state' })
  snapshotId: string | null;

  @ApiProperty({ type: String, nullable: true })
  name: string | null;

  @ApiPropertyOptional({ description: 'The Yjs state as one update, base64 (absent in lists)' })
  state?: string;

  @ApiPropertyOptional({ description: 'Yjs state vector of the state, base64 (absent in lists)' })
  stateVector?: string;

  @ApiProperty()
  sizeBytes: number;

  @ApiProperty({ type: String, nullable: true })
  createdBy: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  createdAt: string | null;
}

export class ApplyUpdateDto {
  @ApiProperty({ description: 'A Yjs update, base64', maxLength: 1_500_000 })
  @IsBase64()
  @MaxLength(1_500_000)
  update: string;
}

export class ApplyUpdateResultDto {
  @ApiProperty({ description: "The server's state vector after the update, base64" })
  stateVector: string;
}

export class AwarenessDto {
  @ApiProperty({
    description: 'A y-protocols awareness update (encodeAwarenessUpdate), base64; a null state leaves',
    maxLength: 8000,
  })
  @IsBase64()
  @MaxLength(8000)
  update: string;
}
