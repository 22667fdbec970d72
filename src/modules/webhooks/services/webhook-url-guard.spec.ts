import { isPublicAddress, urlSyntaxProblem } from './webhook-url-guard.service.js';

describe('webhook URL guard', () => {
  it('accepts public unicast addresses only', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111']) {
      expect(isPublicAddress(address)).toBe(true);
    }
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.251',
      '198.18.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      'not-an-address',
    ]) {
      expect(isPublicAddress(address)).toBe(false);
    }
  });

  it('accepts http and https URLs without credentials', () => {
    expect(urlSyntaxProblem('https://hooks.example.com/quire?x=1')).toBeNull();
    expect(urlSyntaxProblem('http://93.184.215.14:8080/')).toBeNull();
    expect(urlSyntaxProblem('ftp://example.com/')).toMatch(/http or https/);
    expect(urlSyntaxProblem('file:///etc/passwd')).toMatch(/http or https/);
    expect(urlSyntaxProblem('https://user:pw@example.com/')).toMatch(/credentials/);
    expect(urlSyntaxProblem('example.com/hook')).toMatch(/absolute/);
  });

  it('refuses port 0 and raw control characters, takes percent-encoded ones', () => {
    expect(urlSyntaxProblem('https://example.com:0/hook')).toMatch(/port 0/);
    expect(urlSyntaxProblem('https://example.com:00/hook')).toMatch(/port 0/);
    for (const raw of [
      'https://example.com/a\nb',
      'https://example.com/a\rb',
      'https://example.com/a\tb',
      'https://exa\u0000mple.com/',
      'https://example.com/\u007f',
      'https://example.com/\u0085',
    ]) {
      expect(urlSyntaxProblem(raw)).toMatch(/control characters/);
    }
    expect(urlSyntaxProblem('https://example.com/a%0D%0Ab?x=%09')).toBeNull();
    expect(urlSyntaxProblem('https://example.com:8443/hook')).toBeNull();
  });
});
