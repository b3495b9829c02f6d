/**
 * The vendor's Ed25519 public key: licenses signed with its private key (kept by the vendor,
 * never in this repository) are accepted. Tests sign with keys of their own.
 */
export const vendorPublicKeyPem = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJfVFC2jCH2xCdv9TDwEDRVfk4hXWJt7WYDWBXP+OrD4=
-----END PUBLIC KEY-----`;
