import { Injectable, type PipeTransform } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppException } from '../errors/app.exception.js';

/**
 * A path id that names a record by UUID. Anything else names nothing: 404 NOT_FOUND, the answer an unknown UUID
 * gets, rather than a validation error that tells a malformed id from a missing one. `what` words the detail.
 */
@Injectable()
export class UuidParamPipe implements PipeTransform<string, string> {
  constructor(private readonly what: string) {}

  transform(value: string): string {
    if (!isUUID(value)) {
      throw AppException.notFound(this.what);
    }
    return value.toLowerCase();
  }
}
