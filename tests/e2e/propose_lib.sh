# Shared by the kz propose suites (source after lib.sh).
# write_three_api_catalog PATH: a catalog of relu, sum and mul (aliases included).
write_three_api_catalog() {
  python3 - "$1" <<'PY'
import json, sys
apis = [{"id": "relu", "kind": "module", "qualified": "torch.nn.ReLU", "aliases": ["torch.nn.ReLU", "torch.relu", "Tensor.relu"], "category": "activation"},
        {"id": "sum", "kind": "function", "qualified": "torch.sum", "aliases": ["torch.sum", "Tensor.sum"], "category": "reduction"},
        {"id": "mul", "kind": "function", "qualified": "torch.mul", "aliases": ["torch.mul", "Tensor.mul"], "category": "elementwise"}]
json.dump({"format": "kz.api_catalog", "version": 1, "torch": "2.11.0", "apis": apis}, open(sys.argv[1], "w"))
PY
}

# start_fake_proposer DIR: the scripted server (fake_proposer_server.py) with DIR/port and
# DIR/requests.log; sets SERVER and FAKE_URL; on exit the server is killed and DIR removed.
start_fake_proposer() {
  python3 tests/e2e/fake_proposer_server.py "$1/port" "$1/requests.log" &
  SERVER=$!
  trap "kill $SERVER 2>/dev/null; rm -rf '$1'" EXIT
  for _ in $(seq 100); do [[ -s "$1/port" ]] && break; sleep 0.1; done
  FAKE_URL="http://127.0.0.1:$(cat "$1/port")/v1"
}
