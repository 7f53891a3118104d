// An agent endpoint built on the official @ag-ui/encoder 1.0.0: every POST gets the events of
// STREAM.jsonl, with threadId and runId those of the RunAgentInput it carries, encoded as the
// request's Accept header asks (protobuf frames for application/vnd.ag-ui.event+proto, SSE
// otherwise), with the Content-Type the encoder names. Listens on 127.0.0.1 only and prints
// the port it got.
//
//   node serve.mjs STREAM.jsonl [PORT]
import { readFileSync } from "node:fs";
import http from "node:http";
import { EventEncoder } from "@ag-ui/encoder";

const [file, port = "0"] = process.argv.slice(2);
const events = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let input;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "the body is not JSON" }));
      return;
    }
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { "content-type": encoder.getContentType() });
    for (const event of events) {
      const sent = { ...event };
      if ("threadId" in sent && input.threadId) sent.threadId = input.threadId;
      if ("runId" in sent && input.runId) sent.runId = input.runId;
      res.write(encoder.encodeBinary(sent));
    }
    res.end();
  });
});

server.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening on ${server.address().port}`);
});
