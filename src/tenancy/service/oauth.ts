import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { ConfigError, type Config } from '../../config.js';
import type { Sql } from '../../stores/postgres.js';
import { resolveUserWorkspace, type AuthContext, type BearerVerifier, type CredentialRequest } from './auth.js';
import { AppError } from '../../http/wire/errors.js';
import { userBySubject } from '../tables/credentials-table.js';

/**
 * Asymmetric algorithms only: with a symmetric one (HS256) anyone holding the published key
 * material could mint tokens, and `none` is never a signature.
 */
export const acceptedAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface OAuthOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** Seconds of clock skew allowed on exp and nbf. */
  clockToleranceSeconds?: number;
  /**
   * Least time between two fetches of the key set caused by an unknown `kid`: a rotated key is
   * picked up on first sight, yet tokens with made-up kids cannot make us hammer the issuer.
   */
  refetchCooldownMs?: number;
  /** Longest a fetched key set is trusted before it is fetched again. */
  cacheMaxAgeMs?: number;
}

const unauthorized = (reason: string, message: string) => new AppError('UNAUTHORIZED', message, { reason });

/** Maps a verification failure to a reason code; never echoes the token. */
function rejection(error: unknown, request: CredentialRequest): AppError {
  if (error instanceof errors.JWTExpired) return unauthorized('token_expired', 'The bearer token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return unauthorized('missing_claim', `The bearer token has no "${error.claim}" claim`);
    if (error.claim === 'nbf') return unauthorized('token_not_yet_valid', 'The bearer token is not valid yet');
    if (error.claim === 'iss') return unauthorized('invalid_issuer', 'The bearer token was issued by another issuer');
    if (error.claim === 'aud') return unauthorized('invalid_audience', 'The bearer token is meant for another audience');
    return unauthorized('invalid_claims', `The bearer token's "${error.claim}" claim is invalid`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return unauthorized('unsupported_algorithm', `The bearer token must be signed with one of ${acceptedAlgorithms.join(', ')}`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return unauthorized('invalid_signature', 'The bearer token signature is invalid');
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return unauthorized('unknown_signing_key', "The bearer token's signing key is not in the issuer's key set");
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return unauthorized('malformed_token', 'The bearer token is not a valid JWT');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError)) {
    // Our side: the key set could not be fetched or read. The caller may retry.
    request.log.error({ err: error }, 'could not fetch the OAuth key set');
    return new AppError('SERVICE_UNAVAILABLE', 'The OAuth key set is unavailable; retry shortly', {}, { 'retry-after': '5' });
  }
  return unauthorized('invalid_token', 'The bearer token is invalid');
}

/**
 * Verifies OAuth access tokens (JWTs) against the issuer's key set; `sub` names a user through
 * users.external_subject, who then reaches workspaces as a user-scoped key would.
 */
export function createOAuthVerifier(sql: Sql, options: OAuthOptions): BearerVerifier {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl), {
    cooldownDuration: options.refetchCooldownMs ?? 30_000,
    cacheMaxAge: options.cacheMaxAgeMs ?? 10 * 60_000,
    timeoutDuration: 5_000,
  });
  return async (request, token): Promise<AuthContext> => {
    let subject: string;
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: acceptedAlgorithms,
        clockTolerance: options.clockToleranceSeconds ?? 30,
        requiredClaims: ['sub', 'exp'],
      });
      subject = payload.sub!;
    } catch (error) {
      throw rejection(error, request);
    }
    const userId = await userBySubject(sql, subject);
    if (userId === undefined) throw unauthorized('unknown_subject', 'The bearer token names no known user');
    const resolved = await resolveUserWorkspace(sql, request, userId);
    return { ...resolved, principal: { kind: 'oauth', userId, subject } };
  };
}

/** The verifier the configuration asks for: none without a key set URL; all three settings or none. */
export function oauthVerifierFromConfig(sql: Sql, config: Config): BearerVerifier | undefined {
  const { LOUPE_OAUTH_JWKS_URL: jwksUrl, LOUPE_OAUTH_ISSUER: issuer, LOUPE_OAUTH_AUDIENCE: audience } = config;
  if (jwksUrl === undefined && issuer === undefined && audience === undefined) return undefined;
  if (jwksUrl === undefined || issuer === undefined || audience === undefined) {
    // A token checked without its issuer or audience could be one minted for another service.
    throw new ConfigError(['LOUPE_OAUTH_JWKS_URL, LOUPE_OAUTH_ISSUER and LOUPE_OAUTH_AUDIENCE must be set together']);
  }
  return createOAuthVerifier(sql, { jwksUrl, issuer, audience });
}
