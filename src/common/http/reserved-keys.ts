/**
 * Names of JavaScript object members. The validation pipe's class-transformer copies nested JSON objects key by key
 * and skips these (a row write `{"values": {"toString": 1}}` lost the key and wrote an empty revision instead of
 * answering "unknown field"), and `__proto__` would replace the copy's prototype. Bodies may not use them as keys
 * (VALIDATION_ERROR), and no field or property id may be one, so a client can always write what it names.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);
