"""lancount.py SECONDS: frames per second on the agent LAN by (message type id, sender id),
from a raw socket in the rig's tool namespace: ip netns exec <id>-tool python lancount.py 5"""
import socket, time, collections, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
s.bind(("lan0", 0))
c = collections.Counter(); n = 0; end = time.monotonic() + float(sys.argv[1])
s.settimeout(0.5)
while time.monotonic() < end:
    try: f = s.recv(2000)
    except socket.timeout: continue
    n += 1
    i = f.find(b"\xa6\x01", 16)
    if i < 0: c["?"] += 1; continue
    c[(f[i+2], f[i+4])] += 1
print(n / float(sys.argv[1]), "frames/s")
for k, v in c.most_common(30): print(k, round(v / float(sys.argv[1])))
