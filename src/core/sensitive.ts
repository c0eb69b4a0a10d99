/**
 * Paths the read cache never optimises or stores (secrets). Matching is on the
 * file's base name, case-insensitive, with `*` as the only wildcard.
 *
 * Specified by SPEC.md §7.1, §13.3.
 *
 * @module
 */

/**
 * Default sensitive patterns (SPEC §7.1, §13.3): secrets the cache never
 * optimises or stores. Drawn from well-known secret files (the private-key
 * and credential-file signatures of Gitrob, github.com/michenriksen/gitrob,
 * and the files ssh, gpg, the AWS, Google Cloud, Azure and Kubernetes CLIs,
 * Docker, npm, pip, PostgreSQL, git and password managers keep secrets in).
 * A pattern without `/` matches the base name; one with `/` matches the last
 * path segments (`dir/**` matches anything below a `dir` segment).
 */
export const DEFAULT_SENSITIVE_PATTERNS: readonly string[] = [
  // environment and private keys
  ".env*",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.crt",
  "*.cer",
  "*.der",
  "*.pk8",
  "*.ppk",
  "*.jks",
  "*.keystore",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  "*_rsa",
  "*_dsa",
  "*_ecdsa",
  "*_ed25519",
  // credential files
  ".npmrc",
  ".netrc",
  "_netrc",
  ".pgpass",
  ".git-credentials",
  ".pypirc",
  ".htpasswd",
  ".dockercfg",
  "credentials",
  "terraform.tfvars",
  "*.ovpn",
  // password databases
  "*.kdbx",
  "*.kdb",
  "*.psafe3",
  // directories of secrets
  ".ssh/**",
  ".gnupg/**",
  ".aws/**",
  ".azure/**",
  ".config/gcloud/**",
  ".kube/config",
  ".docker/config.json",
];

/** Compiled segment patterns (a memo: patterns come from configuration, a small set). */
const compiled = new Map<string, RegExp>();

function toRegExp(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    const body = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(
      ".*",
    );
    re = new RegExp(`^${body}$`, "i");
    if (compiled.size < 10_000) compiled.set(pattern, re);
  }
  return re;
}

/**
 * True when `path` matches one of `patterns`: a pattern without `/` is
 * matched against the base name; a pattern with `/` against the last path
 * segments, where a final `**` stands for one or more segments below.
 * Matching is case-insensitive and `*` is the only wildcard in a segment.
 *
 * @example
 * ```ts
 * import { isSensitivePath } from "@readcache/core/rules";
 * isSensitivePath("/w/.env.local"); // true
 * isSensitivePath("/home/me/.ssh/config"); // true
 * isSensitivePath("/w/src/env.ts"); // false
 * ```
 */
export function isSensitivePath(
  path: string,
  patterns: readonly string[] = DEFAULT_SENSITIVE_PATTERNS,
): boolean {
  const segs = path.split(/[\\/]/).filter((s) => s !== "");
  return patterns.some((p) => matches(segs, p));
}

function matches(segs: readonly string[], pattern: string): boolean {
  const pat = pattern.split("/").filter((s) => s !== "");
  if (pat.length === 0 || segs.length === 0) return false;
  const seg = (i: number, p: string) => toRegExp(p).test(segs[i]);
  if (pat[pat.length - 1] === "**") {
    const prefix = pat.slice(0, -1);
    for (let i = 0; i + prefix.length < segs.length; i++) {
      if (prefix.every((p, k) => seg(i + k, p))) return true;
    }
    return false;
  }
  const at = segs.length - pat.length;
  return at >= 0 && pat.every((p, k) => seg(at + k, p));
}
