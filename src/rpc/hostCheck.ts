// Which Host headers the server answers: the defence against DNS rebinding. A web page can point
// a name of its own at 127.0.0.1 and then send requests that the browser treats as same-origin, so
// they carry no Origin header for the CORS check to refuse; their Host header still names the
// page's domain. As geth does: a request whose Host is an IP literal always passes (rebinding needs
// a name), names pass when --vhosts lists them (default: localhost), and "*" lets every name pass.
import { isIP } from "node:net";

/** Says whether a request with this Host header value may be answered. */
export type HostCheck = (hostHeader: string | undefined) => boolean;

/** The name or address of a Host header value without its port, lower case; "" when it has none. */
export function hostnameOf(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    return close < 0 ? host : host.slice(1, close);
  }
  const portColon = host.lastIndexOf(":");
  const name = portColon >= 0 && /^:\d*$/.test(host.slice(portColon)) ? host.slice(0, portColon) : host;
  // "localhost." names the same host as "localhost".
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** Host header values whose verdict is kept (a client sends the same one with every request). */
const rememberedVerdicts = 64;

export function createHostCheck(allowedHosts: readonly string[]): HostCheck {
  const allowed = new Set(allowedHosts.map(hostnameOf));
  if (allowed.has("*")) return () => true;
  const verdicts = new Map<string, boolean>();
  return (hostHeader) => {
    // Only an HTTP/1.0 request can come without one (node:http refuses HTTP/1.1 without Host),
    // and a browser always sends it.
    if (hostHeader === undefined) return true;
    let verdict = verdicts.get(hostHeader);
    if (verdict === undefined) {
      const name = hostnameOf(hostHeader);
      verdict = isIP(name) !== 0 || allowed.has(name);
      if (verdicts.size >= rememberedVerdicts) verdicts.clear();
      verdicts.set(hostHeader, verdict);
    }
    return verdict;
  };
}
