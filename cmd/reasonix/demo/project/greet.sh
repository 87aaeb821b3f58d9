#!/bin/sh
# greet.sh NAME... prints one greeting per name.
for name in "$@"; do
  echo "Hello, $nmae!"
done
