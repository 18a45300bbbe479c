/**
 * A self-signed X.509 v3 certificate built with node:crypto alone (no openssl binary): an EC
 * P-256 key pair, a DER-encoded TBSCertificate (RFC 5280 §4.1) signed with ecdsa-with-SHA256,
 * subjectAltName for the given DNS names and IPv4 addresses, and basicConstraints CA:TRUE so a
 * client can trust the certificate itself as its CA.
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n >>= 8) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const seq = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);

function oid(dotted: string): Buffer {
  const parts = dotted.split(".").map(Number);
  const bytes: number[] = [40 * (parts[0] ?? 0) + (parts[1] ?? 0)];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    for (let n = part >> 7; n > 0; n >>= 7) chunk.unshift((n & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const pad = (n: number) => String(n).padStart(2, "0");
  const text =
    pad(date.getUTCFullYear() % 100) +
    pad(date.getUTCMonth() + 1) +
    pad(date.getUTCDate()) +
    pad(date.getUTCHours()) +
    pad(date.getUTCMinutes()) +
    pad(date.getUTCSeconds()) +
    "Z";
  return tlv(0x17, Buffer.from(text, "ascii"));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

export interface SelfSignedCertificate {
  keyPem: string;
  certPem: string;
}

/** Makes a fresh key pair and a certificate valid from one hour ago for `days` days. */
export function selfSignedCertificate(options: {
  commonName: string;
  hosts: string[];
  days?: number;
}): SelfSignedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const spki = publicKey.export({ type: "spki", format: "der" });
  const algorithm = seq(oid("1.2.840.10045.4.3.2")); // ecdsa-with-SHA256
  const name = seq(set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(options.commonName, "utf8")))));
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 1) & 0x7f) | 0x01;
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + (options.days ?? 30) * 86400_000);
  // IPv6 literals are left out of subjectAltName (IPv4 and DNS names only).
  const altNames = [...new Set(options.hosts)]
    .filter((host) => !isIPv6(host))
    .map((host) =>
      isIPv4(host)
        ? tlv(0x87, Buffer.from(host.split(".").map(Number)))
        : tlv(0x82, Buffer.from(host, "ascii")),
    );
  const extensions = tlv(
    0xa3,
    seq(
      extension("2.5.29.19", true, seq(tlv(0x01, Buffer.from([0xff])))), // basicConstraints CA:TRUE
      extension("2.5.29.15", true, tlv(0x03, Buffer.from([0x02, 0x84]))), // digitalSignature, keyCertSign
      extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))), // extKeyUsage serverAuth
      extension("2.5.29.17", false, seq(...altNames)), // subjectAltName
    ),
  );
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([0x02]))), // version v3
    tlv(0x02, serial),
    algorithm,
    name,
    seq(utcTime(notBefore), utcTime(notAfter)),
    name,
    spki,
    extensions,
  );
  const signature = sign("sha256", tbs, privateKey);
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.from([0x00]), signature));
  const base64 = der
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .trim();
  return {
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    certPem: `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`,
  };
}
