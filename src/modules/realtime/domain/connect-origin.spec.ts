import { connectOrigin, parseHostHeader, publicOrigin } from './connect-origin.js';

describe('connect origin', () => {
  it.each([
    ['localhost:3000', false, { hostname: 'localhost', port: 3000, authority: 'localhost:3000' }],
    ['Quire.Example.com', true, { hostname: 'quire.example.com', port: 443, authority: 'quire.example.com' }],
    ['quire.example.com:443', true, { port: 443, authority: 'quire.example.com' }],
    ['10.0.0.1:80', false, { hostname: '10.0.0.1', authority: '10.0.0.1' }],
    ['[::1]:8080', false, { hostname: '[::1]', port: 8080, authority: '[::1]:8080' }],
    ['svc_name:1', false, { hostname: 'svc_name', port: 1 }],
  ])('takes %s as it is', (raw, secure, expected) => {
    expect(parseHostHeader(raw, secure)).toMatchObject({ ...expected, secure, prefix: '' });
  });

  it.each([
    [''],
    ['x:99999'],
    ['x:0'],
    ['x:'],
    ['x:+1'],
    ['bad host'],
    ['a:b:c'],
    ['ex.com:abc'],
    ['%zz'],
    ['a/b'],
    ['a@b'],
    ['a?b'],
    ['a#b'],
    ['999.1.1.1'],
    ['-a.com'],
    ['a-.com'],
    ['a..b'],
    ['.a'],
    ['[zz]'],
    ['[::1'],
    [`${'a'.repeat(64)}.com`],
  ])('refuses %j', (raw) => {
    expect(parseHostHeader(raw, false)).toBeNull();
  });

  it('falls back to PUBLIC_BASE_URL, keeping its path as the prefix', () => {
    expect(connectOrigin('a/b', 'http', 'https://quire.example.com/base')).toEqual({
      secure: true,
      hostname: 'quire.example.com',
      port: 443,
      authority: 'quire.example.com',
      prefix: '/base',
    });
    expect(publicOrigin('http://127.0.0.1:8080')).toMatchObject({
      authority: '127.0.0.1:8080',
      port: 8080,
      prefix: '',
    });
    expect(connectOrigin(undefined, 'http', 'http://localhost:3000')).toMatchObject({
      authority: 'localhost:3000',
    });
  });
});
