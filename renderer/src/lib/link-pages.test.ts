import { describe, expect, it } from 'vitest';
import { consoleAddress, invitationToken } from './link-pages';

describe('the pages of one-time links', () => {
  it('reads the token of an invitation link, also behind a path prefix', () => {
    expect(invitationToken({ pathname: '/invitation', search: '?token=abc' })).toBe('abc');
    expect(invitationToken({ pathname: '/stellwerk/invitation/', search: '?token=abc' })).toBe('abc');
  });

  it('finds no invitation elsewhere or without a token', () => {
    expect(invitationToken({ pathname: '/', search: '?token=abc' })).toBeNull();
    expect(invitationToken({ pathname: '/onboarding', search: '?token=abc' })).toBeNull();
    expect(invitationToken({ pathname: '/invitation', search: '' })).toBeNull();
    expect(invitationToken({ pathname: '/invitation', search: '?token=%20' })).toBeNull();
    expect(invitationToken({ pathname: '/my-invitation', search: '?token=abc' })).toBeNull();
  });

  it('leaves a spent link for the console root at the given page, keeping a prefix and other parameters', () => {
    expect(consoleAddress('http://127.0.0.1:8080/onboarding?token=t#/login', '#/login')).toBe(
      'http://127.0.0.1:8080/#/login',
    );
    expect(consoleAddress('https://iot.example/stellwerk/invitation?token=t&lang=de', '#/login')).toBe(
      'https://iot.example/stellwerk/?lang=de#/login',
    );
    expect(consoleAddress('http://localhost:8080/#/devices', '#/login')).toBe(
      'http://localhost:8080/#/login',
    );
    expect(consoleAddress('http://localhost:8080/onboarding?token=t#/onboarding')).toBe(
      'http://localhost:8080/#/onboarding',
    );
  });
});
