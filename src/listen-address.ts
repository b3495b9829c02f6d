/** Parses `HOST:PORT` (IPv6 as `[::1]:8080`); null when malformed. */
export function parseListen(text: string): { host: string; port: number } | null {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  if (!match) return null;
  const port = Number(match[3]);
  if (port > 65_535) return null;
  return { host: (match[1] ?? match[2]) as string, port };
}
