// Reads a response body the way `@ag-ui/client` 1.0.0 does: the bytes of FILE go through the
// client's own `transformHttpEventStream`, with CONTENT-TYPE picking the parser (protobuf
// frames or server-sent events). Prints one line of JSON: the types of the events it handed
// on, and the error that ended the stream, if one did.
//
//   node read-body.mjs FILE CONTENT-TYPE [READ-SIZE]
//
// The body is handed over in one read, or in reads of READ-SIZE bytes, as a socket delivers a
// long body (the client's SSE buffer limit is checked after each read).
import { readFileSync } from "node:fs";
import { transformHttpEventStream } from "@ag-ui/client";
// rxjs is the client's own dependency (installed beside it); the package does not export its
// `HttpEventType`, whose members are these strings.
import { Subject } from "rxjs";

const HttpEventType = { HEADERS: "headers", DATA: "data" };

const [file, contentType, readSize] = process.argv.slice(2);
if (!contentType) {
  console.error("usage: node read-body.mjs FILE CONTENT-TYPE");
  process.exit(2);
}
const types = [];
const done = new Promise((resolve) => {
  const chunks = new Subject();
  transformHttpEventStream(chunks).subscribe({
    next: (event) => types.push(event.type),
    error: (error) => resolve({ types, error: String(error?.message ?? error) }),
    complete: () => resolve({ types }),
  });
  chunks.next({
    type: HttpEventType.HEADERS,
    status: 200,
    headers: new Headers({ "content-type": contentType }),
  });
  const body = new Uint8Array(readFileSync(file));
  const step = readSize ? Number(readSize) : body.length || 1;
  for (let at = 0; at < body.length; at += step) {
    chunks.next({ type: HttpEventType.DATA, data: body.subarray(at, at + step) });
  }
  chunks.complete();
});
console.log(JSON.stringify(await done));
