// The protobuf transport as the published @ag-ui/proto 1.0.0 writes and reads it: each frame
// a 4-byte big-endian length and then the message its `encode` returns.
//
//   node proto.mjs encode < events.jsonl > events.pb     JSONL in, frames out
//   node proto.mjs decode < events.pb > events.jsonl     frames in, JSONL out (JSON.stringify)
//
// Warnings the package prints (an event it encodes without validation) go to stderr.
import { readFileSync, writeSync } from "node:fs";
import { encode, decode } from "@ag-ui/proto";

const input = readFileSync(0);
const mode = process.argv[2];

if (mode === "encode") {
  const lines = input.toString("utf8").split("\n").filter((line) => line.trim() !== "");
  for (const line of lines) {
    const message = encode(JSON.parse(line));
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(message.length);
    writeSync(1, prefix);
    writeSync(1, message);
  }
} else if (mode === "decode") {
  let at = 0;
  while (at < input.length) {
    const length = input.readUInt32BE(at);
    const event = decode(new Uint8Array(input.subarray(at + 4, at + 4 + length)));
    writeSync(1, JSON.stringify(event) + "\n");
    at += 4 + length;
  }
} else {
  console.error("usage: node proto.mjs encode|decode < in > out");
  process.exit(2);
}
