#!/usr/bin/env python3
# What `agui-lens proxy` adds to a stream's latency: each SSE frame's arrival timed on a call
# made directly to an agent and on one made through the proxy, median of RUNS each.
#
#   agui-lens serve fixtures/recordings/pydantic-ai-full.jsonl --drip 0.005   # prints URL_A
#   agui-lens proxy --upstream URL_A                                        # prints URL_B
#   python3 scripts/proxy-latency.py URL_A URL_B 50
import socket, sys, time, json, statistics, re
def call(url, n):
    host, port = re.match(r"http://([^:]+):(\d+)", url).groups()
    body = json.dumps({"threadId": f"lat-{n}", "runId": "r", "messages": []}).encode()
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.perf_counter()
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    times, buf, seen = [], b"", 0
    while True:
        d = s.recv(65536)
        if not d: break
        buf += d
        c = buf.count(b"data: ")
        times += [time.perf_counter() - t0] * (c - seen); seen = c
        if b"RUN_FINISHED" in buf and buf.endswith(b"0\r\n\r\n"): break
    s.close()
    return times
def measure(url, runs):
    firsts, gaps = [], []
    for i in range(runs):
        t = call(url, i)
        firsts.append(t[0]); gaps += [b - a for a, b in zip(t, t[1:])]
    return statistics.median(firsts) * 1000, statistics.median(gaps) * 1000, len(t)
direct, proxied, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = measure(direct, runs); p = measure(proxied, runs)
print(f"events per stream {d[2]}, runs {runs}")
print(f"first event: direct {d[0]:.2f} ms, through proxy {p[0]:.2f} ms, added {p[0]-d[0]:.2f} ms")
print(f"between events: direct {d[1]:.2f} ms, through proxy {p[1]:.2f} ms, added {p[1]-d[1]:.2f} ms")
