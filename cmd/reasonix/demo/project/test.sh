#!/bin/sh
# The project's one test: greet.sh greets every name it is given.
got=$(sh greet.sh Ada Linus)
want="Hello, Ada!
Hello, Linus!"
if [ "$got" = "$want" ]; then
  echo "ok: greet.sh greets every name (1 test passed)"
else
  echo "FAIL: greet.sh printed:"
  echo "$got"
  exit 1
fi
