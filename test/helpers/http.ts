// Raw HTTP for transport tests: exact bodies, headers and status codes.

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is empty. */
  json: unknown;
}

export async function postRaw(url: string, body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }, method = "POST"): Promise<RawResponse> {
  const response = await fetch(url, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text === "" ? undefined : (JSON.parse(text) as unknown) };
}

/** POSTs a JSON value. */
export function postJson(url: string, value: unknown, headers?: Record<string, string>): Promise<RawResponse> {
  return postRaw(url, JSON.stringify(value), headers);
}
