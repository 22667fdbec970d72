import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every environment variable src/config reads (readString(env, 'NAME', …) and friends). */
function variablesRead(): string[] {
  const names = new Set<string>();
  for (const file of readdirSync('src/config').filter(
    (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'),
  )) {
    const source = readFileSync(join('src/config', file), 'utf8');
    for (const match of source.matchAll(/read(?:String|Int|Bool|Url|Enum|List)\(\s*env,\s*'([A-Z0-9_]+)'/g)) {
      names.add(match[1]);
    }
  }
  return [...names].sort();
}

describe('configuration documentation', () => {
  const variables = variablesRead();

  it('finds the variables', () => {
    expect(variables).toEqual(
      expect.arrayContaining([
        'PORT',
        'DATABASE_URL',
        'PUBLIC_BASE_URL',
        'AUTH_ISSUER_URL',
        'REDIS_URL',
        'LOG_LEVEL',
      ]),
    );
  });

  it('.env.example documents every variable', () => {
    const example = readFileSync('.env.example', 'utf8');
    const missing = variables.filter((name) => !new RegExp(`^#? ?${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it('docs/configuration.md documents every variable', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    const missing = variables.filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
