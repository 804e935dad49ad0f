import type { XOAuth2ProvisionCallback } from 'nodemailer/lib/xoauth2/index.js';
import { couldNotConnect, refusalOf } from './dial/connect-failure.js';
import type { DialOut } from './dial/dial-out.js';

/**
 * Access tokens for SMTP XOAUTH2 from the refresh token (RFC 6749 section 6), fetched through
 * DialOut: nodemailer would otherwise call the tenant-set token endpoint with its own client.
 * Failures reach the connector log through nodemailer as an authentication failure, so they
 * carry tenant-safe words only.
 */
export function refreshingAccessTokens(
  dial: DialOut,
  grant: { tokenUrl: string; clientId: string; clientSecret: string; refreshToken: string },
): XOAuth2ProvisionCallback {
  return (_user, _renew, callback) => {
    accessToken(dial, grant).then(
      ({ token, expires }) => callback(null, token, expires),
      (error: Error) => callback(error),
    );
  };
}

async function accessToken(
  dial: DialOut,
  grant: { tokenUrl: string; clientId: string; clientSecret: string; refreshToken: string },
): Promise<{ token: string; expires: number }> {
  let response: Response;
  let body: { access_token?: unknown; expires_in?: unknown; error?: unknown };
  try {
    response = await dial.fetch(grant.tokenUrl, {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: grant.refreshToken,
        client_id: grant.clientId,
        client_secret: grant.clientSecret,
      }),
      redirect: 'error',
      signal: AbortSignal.timeout(10_000),
    });
    body = (await response.json().catch(() => ({}))) as typeof body;
  } catch (error) {
    const refused = refusalOf(error);
    if (refused) throw refused;
    dial.connectFailed(error, { target: new URL(grant.tokenUrl).origin });
    throw new Error(couldNotConnect('the OAuth token endpoint'), { cause: error });
  }
  if (typeof body.access_token !== 'string') {
    const reason = typeof body.error === 'string' ? ` (${body.error})` : '';
    throw new Error(`The token endpoint answered ${response.status} without an access token${reason}`);
  }
  const lifetime = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in);
  return { token: body.access_token, expires: lifetime > 0 ? Date.now() + lifetime * 1000 : 0 };
}
