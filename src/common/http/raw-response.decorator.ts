import { SetMetadata } from '@nestjs/common';
import { RAW_RESPONSE } from './envelope.interceptor.js';

/** For the few responses that are not JSON envelopes: metrics text, HTML pages, event streams, JWKS. */
export const RawResponse = (): MethodDecorator & ClassDecorator => SetMetadata(RAW_RESPONSE, true);
