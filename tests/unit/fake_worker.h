// A stand-in kz_worker package for tests: a real python3 process that reads the request
// frame and runs `body` with `req`, `fd` and `send(obj)` defined.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "util/fs.h"
#include "worker/worker_client.h"

namespace kz::testing_support {

inline worker::WorkerConfig FakeWorker(const std::string& body) {
  std::string err;
  std::string dir = util::MakeTempDir(::testing::TempDir(), "fakeworker-", &err);
  util::MakeDirs(dir + "/kz_worker", &err);
  util::WriteFileAtomic(dir + "/kz_worker/__init__.py", "", &err);
  std::string main =
      "import json, os, struct, sys\n"
      "fd = int(os.environ['KZ_PROTOCOL_FD'])\n"
      "n = struct.unpack('>I', os.read(fd, 4))[0]\n"
      "req = json.loads(os.read(fd, n))\n"
      "def send(obj):\n"
      "    obj = dict(obj, token=req.get('token'))\n"
      "    b = json.dumps(obj).encode()\n"
      "    os.write(fd, struct.pack('>I', len(b)) + b)\n" + body + "\n";
  util::WriteFileAtomic(dir + "/kz_worker/__main__.py", main, &err);
  worker::WorkerConfig config;
  config.python = "python3";
  config.package_dir = dir;
  return config;
}

}  // namespace kz::testing_support
