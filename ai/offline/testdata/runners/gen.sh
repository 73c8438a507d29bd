#!/usr/bin/env bash
# Regenerates the real-output cases of the test-runner corpus (TestRunnerCorpus): tiny
# projects with passing and failing tests, run with the real tools, their stdout, stderr and
# exit code kept as one case file each. Needs go, python3 with pytest (Debian python3-pytest),
# node + npm (jest, vitest, mocha are installed into a scratch dir), cargo, ruby with rspec
# (Debian ruby-rspec), phpunit (Debian phpunit), cmake + gcc, make. A runner that is missing
# is skipped with a note: its old case files stay. Documented-output cases (doc-*.txt) are
# written by hand from the runners' documentation and are not touched.
#
#   bash ai/offline/testdata/runners/gen.sh
set -uo pipefail
out="$(cd "$(dirname "$0")" && pwd)"
work=/tmp/memnode-runners
rm -rf "$work" && mkdir -p "$work"
only_cuts=false
[ "${1:-}" = --cuts-only ] && only_cuts=true

# case NAME WANT DIR COMMAND: runs COMMAND in DIR and writes $out/NAME.txt.
case_() {
  local name=$1 want=$2 dir=$3 cmd=$4 version
  version=$5
  (cd "$dir" && bash -c "$cmd" >"$work/stdout" 2>"$work/stderr"); local rc=$?
  {
    echo "# source: real ($version, run by gen.sh)"
    echo "# command: $cmd"
    echo "# exit: $rc"
    echo "# want: $want"
    echo "-- stdout --"
    cat "$work/stdout"
    echo "-- stderr --"
    cat "$work/stderr"
  } >"$out/$name.txt"
  echo "$name: exit $rc"
}
have() { command -v "$1" >/dev/null 2>&1 || { echo "skip: $1 not installed"; return 1; }; }
mk() { mkdir -p "$(dirname "$1")" && cat >"$1"; }

# cut_ NAME SRC STREAM N WANT: a real output cut off after N lines of its stream (as a
# killed run or a truncated hook payload leaves it), with no exit code.
cut_() {
  local name=$1 src=$2 stream=$3 n=$4 want=$5
  {
    echo "# source: real, $src.txt's $stream cut off after $n lines (gen.sh)"
    echo "# command: $(sed -n 's/^# command: //p' "$out/$src.txt")"
    echo "# exit: none"
    echo "# want: $want"
    echo "-- stdout --"
    [ "$stream" = stdout ] && awk '/^-- stdout --$/{f=1;next} /^-- stderr --$/{f=0} f' "$out/$src.txt" | head -n "$n"
    echo "-- stderr --"
    [ "$stream" = stderr ] && awk 'f; /^-- stderr --$/{f=1}' "$out/$src.txt" | head -n "$n"
  } >"$out/$name.txt"
  echo "$name: cut"
}
cuts() {
  cut_ cut-pytest-v-after-a-pass pytest-v-pass stdout 7 unknown
  cut_ cut-pytest-v-after-a-failure pytest-v-mixed stdout 7 fail
  cut_ cut-go-v-after-a-pass go-v-mixed stdout 2 unknown
  cut_ cut-go-v-after-a-failure go-v-mixed stdout 5 fail
  cut_ cut-jest-after-a-failure jest-fail stderr 3 fail
  cut_ cut-cargo-after-a-pass cargo-mixed stdout 3 unknown
  cut_ cut-mocha-after-a-pass mocha-fail stdout 3 unknown
}
if $only_cuts; then cuts; exit 0; fi

# --- go test
if have go; then
  v="$(go version | cut -d' ' -f3)"
  for p in pass fail build notests; do mkdir -p "$work/go-$p" && (cd "$work/go-$p" && go mod init example.com/calc >/dev/null 2>&1); done
  mk "$work/go-pass/calc.go" <<<'package calc

func Add(a, b int) int { return a + b }'
  mk "$work/go-pass/calc_test.go" <<<'package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1+2 != 3")
	}
}'
  cp "$work/go-pass/calc.go" "$work/go-fail/" && mk "$work/go-fail/calc_test.go" <<<'package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1+2 != 3")
	}
}

func TestSub(t *testing.T) {
	if got := Add(5, -3); got != 3 {
		t.Errorf("Add(5, -3) = %d, want 3", got)
	}
}'
  mk "$work/go-build/calc.go" <<<'package calc

func Add(a, b int) int { return a + c }'
  cp "$work/go-pass/calc_test.go" "$work/go-build/"
  cp "$work/go-pass/calc.go" "$work/go-notests/"
  case_ go-pass pass "$work/go-pass" "go test ./..." "$v"
  case_ go-v-pass pass "$work/go-pass" "go test -v ./..." "$v"
  case_ go-json-pass pass "$work/go-pass" "go test -json ./..." "$v"
  case_ go-fail fail "$work/go-fail" "go test ./..." "$v"
  case_ go-v-mixed fail "$work/go-fail" "go test -v ./..." "$v"
  case_ go-json-mixed fail "$work/go-fail" "go test -json ./..." "$v"
  case_ go-compile-error fail "$work/go-build" "go test ./..." "$v"
  case_ go-json-compile-error fail "$work/go-build" "go test -json ./..." "$v"
  case_ go-no-test-files none "$work/go-notests" "go test ./..." "$v"
  case_ go-run-matches-nothing none "$work/go-pass" "go test -run TestNothing ./..." "$v"
fi

# --- pytest and unittest (Debian's python3 has pytest; pyenv's may not)
py=python3
/usr/bin/python3 -c 'import pytest' 2>/dev/null && py=/usr/bin/python3
if $py -c 'import pytest' 2>/dev/null; then
  v="pytest $($py -c 'import pytest; print(pytest.__version__)')"
  mk "$work/py-pass/test_app.py" <<<'def test_add():
    assert 1 + 1 == 2

def test_upper():
    assert "a".upper() == "A"'
  mk "$work/py-mixed/test_app.py" <<<'def greet(name):
    return "Helo, " + name

def test_greet():
    assert greet("Ada") == "Hello, Ada"

def test_add():
    assert 1 + 1 == 2'
  mk "$work/py-allfail/test_app.py" <<<'def test_one():
    assert 1 == 2

def test_two():
    assert "a" == "b"'
  mk "$work/py-collect/test_app.py" <<<'import no_such_module

def test_add():
    assert 1 + 1 == 2'
  mk "$work/py-collect/test_ok.py" <<<'def test_ok():
    assert True'
  mkdir -p "$work/py-none" && mk "$work/py-none/app.py" <<<'x = 1'
  case_ pytest-q-pass pass "$work/py-pass" "$py -m pytest -q" "$v"
  case_ pytest-q-mixed fail "$work/py-mixed" "$py -m pytest -q" "$v"
  case_ pytest-q-all-fail fail "$work/py-allfail" "pytest -q" "$v"
  case_ pytest-v-mixed fail "$work/py-mixed" "pytest -v" "$v"
  case_ pytest-v-pass pass "$work/py-pass" "pytest -v" "$v"
  case_ pytest-full-mixed fail "$work/py-mixed" "pytest" "$v"
  case_ pytest-full-pass pass "$work/py-pass" "pytest" "$v"
  case_ pytest-collection-error fail "$work/py-collect" "pytest -q" "$v"
  case_ pytest-full-collection-error fail "$work/py-collect" "pytest" "$v"
  case_ pytest-no-tests none "$work/py-none" "pytest -q" "$v"
fi
if have python3; then
  v="$(python3 --version)"
  mk "$work/ut-pass/test_calc.py" <<<'import unittest

class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_sub(self):
        self.assertEqual(3 - 1, 2)'
  mk "$work/ut-fail/test_calc.py" <<<'import unittest

class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_sub(self):
        self.assertEqual(3 - 1, 1)'
  mk "$work/ut-error/test_calc.py" <<<'import unittest
import no_such_module

class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)'
  mkdir -p "$work/ut-none"
  case_ unittest-pass pass "$work/ut-pass" "python3 -m unittest" "$v"
  case_ unittest-v-pass pass "$work/ut-pass" "python3 -m unittest -v" "$v"
  case_ unittest-fail fail "$work/ut-fail" "python3 -m unittest" "$v"
  case_ unittest-v-fail fail "$work/ut-fail" "python3 -m unittest -v" "$v"
  case_ unittest-import-error fail "$work/ut-error" "python3 -m unittest" "$v"
  case_ unittest-no-tests none "$work/ut-none" "python3 -m unittest" "$v"
fi

# --- Node: node --test, jest, vitest, mocha (from npm, into a scratch dir)
if have node && have npm; then
  nm="$work/npm"
  mkdir -p "$nm" && (cd "$nm" && npm init -y >/dev/null && npm install --no-audit --no-fund jest@29 vitest@3 mocha@10 >/dev/null 2>&1)
  for p in pass fail error none; do mkdir -p "$work/js-$p" && ln -s "$nm/node_modules" "$work/js-$p/node_modules" && echo '{"name":"calc","version":"1.0.0"}' >"$work/js-$p/package.json"; done
  mk "$work/js-pass/calc.test.js" <<<'const assert = require("node:assert");
const { test } = require(process.env.RUNNER === "node" ? "node:test" : "./t.js");
test("adds", () => assert.strictEqual(1 + 2, 3));
test("upper", () => assert.strictEqual("a".toUpperCase(), "A"));'
  mk "$work/js-fail/calc.test.js" <<<'const assert = require("node:assert");
const { test } = require(process.env.RUNNER === "node" ? "node:test" : "./t.js");
test("adds", () => assert.strictEqual(1 + 2, 3));
test("subtracts", () => assert.strictEqual(5 - 3, 3));'
  mk "$work/js-error/calc.test.js" <<<'const assert = require("node:assert");
const { test } = require(process.env.RUNNER === "node" ? "node:test" : "./t.js");
test("adds", () => assert.strictEqual(1 + 2, 3)
'
  # t.js gives jest, mocha and vitest one `test` (their globals; vitest's from its module).
  for p in pass fail error none; do mk "$work/js-$p/t.js" <<<'module.exports = { test: globalThis.test || globalThis.it };'; done
  # vitest has no globals by default: its tests import `test`, in folders of their own
  # (node --test would run them too).
  for p in pass fail error none; do mkdir -p "$work/vt-$p" && ln -s "$nm/node_modules" "$work/vt-$p/node_modules" && cp "$work/js-$p/package.json" "$work/vt-$p/"; done
  for p in pass fail error; do { echo 'import assert from "node:assert"; import { test } from "vitest";'; tail -n +3 "$work/js-$p/calc.test.js"; } >"$work/vt-$p/calc.test.mjs"; done
  vn="node $(node --version)"
  case_ node-test-pass pass "$work/js-pass" "RUNNER=node node --test" "$vn"
  case_ node-test-fail fail "$work/js-fail" "RUNNER=node node --test" "$vn"
  case_ node-test-syntax-error fail "$work/js-error" "RUNNER=node node --test" "$vn"
  case_ node-test-no-tests none "$work/js-none" "RUNNER=node node --test" "$vn"
  if [ -x "$nm/node_modules/.bin/jest" ]; then
    v="jest $("$nm/node_modules/.bin/jest" --version)"
    case_ jest-pass pass "$work/js-pass" "npx jest calc.test.js" "$v"
    case_ jest-fail fail "$work/js-fail" "npx jest calc.test.js" "$v"
    case_ jest-syntax-error fail "$work/js-error" "npx jest calc.test.js" "$v"
    case_ jest-no-tests none "$work/js-none" "npx jest" "$v"
  fi
  if [ -x "$nm/node_modules/.bin/vitest" ]; then
    v="vitest $("$nm/node_modules/.bin/vitest" --version | tr -d '\n')"
    case_ vitest-pass pass "$work/vt-pass" "npx vitest run" "$v"
    case_ vitest-fail fail "$work/vt-fail" "npx vitest run" "$v"
    case_ vitest-syntax-error fail "$work/vt-error" "npx vitest run" "$v"
    case_ vitest-no-tests none "$work/vt-none" "npx vitest run" "$v"
  fi
  if [ -x "$nm/node_modules/.bin/mocha" ]; then
    v="mocha $("$nm/node_modules/.bin/mocha" --version)"
    case_ mocha-pass pass "$work/js-pass" "npx mocha calc.test.js" "$v"
    case_ mocha-fail fail "$work/js-fail" "npx mocha calc.test.js" "$v"
    case_ mocha-syntax-error fail "$work/js-error" "npx mocha calc.test.js" "$v"
    case_ mocha-no-tests none "$work/js-none" "npx mocha" "$v"
  fi
fi

# --- cargo test
if have cargo; then
  v="$(cargo --version | cut -d' ' -f1-2)"
  for p in pass fail build none; do mkdir -p "$work/rs-$p/src" && printf '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n' >"$work/rs-$p/Cargo.toml"; done
  mk "$work/rs-pass/src/lib.rs" <<<'pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    #[test]
    fn adds() { assert_eq!(super::add(1, 2), 3); }
    #[test]
    fn adds_negative() { assert_eq!(super::add(-1, -2), -3); }
}'
  mk "$work/rs-fail/src/lib.rs" <<<'pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    #[test]
    fn adds() { assert_eq!(super::add(1, 2), 3); }
    #[test]
    fn adds_negative() { assert_eq!(super::add(-1, -2), 3); }
}'
  mk "$work/rs-build/src/lib.rs" <<<'pub fn add(a: i32, b: i32) -> i32 { a + "b" }'
  mk "$work/rs-none/src/lib.rs" <<<'pub fn add(a: i32, b: i32) -> i32 { a + b }'
  case_ cargo-pass pass "$work/rs-pass" "cargo test" "$v"
  case_ cargo-mixed fail "$work/rs-fail" "cargo test" "$v"
  case_ cargo-compile-error fail "$work/rs-build" "cargo test" "$v"
  case_ cargo-no-tests none "$work/rs-none" "cargo test" "$v"
fi

# --- rspec and minitest
if have rspec; then
  v="rspec $(rspec --version | grep -m1 -o '[0-9][0-9.]*')"
  mk "$work/rb-pass/spec/calc_spec.rb" <<<'RSpec.describe "calc" do
  it("adds") { expect(1 + 2).to eq(3) }
  it("upcases") { expect("a".upcase).to eq("A") }
end'
  mk "$work/rb-fail/spec/calc_spec.rb" <<<'RSpec.describe "calc" do
  it("adds") { expect(1 + 2).to eq(3) }
  it("subtracts") { expect(5 - 3).to eq(3) }
end'
  mk "$work/rb-error/spec/calc_spec.rb" <<<'require "no_such_gem"
RSpec.describe "calc" do
  it("adds") { expect(1 + 2).to eq(3) }
end'
  mkdir -p "$work/rb-none/spec"
  case_ rspec-pass pass "$work/rb-pass" "rspec" "$v"
  case_ rspec-fail fail "$work/rb-fail" "rspec" "$v"
  case_ rspec-load-error fail "$work/rb-error" "rspec" "$v"
  case_ rspec-no-examples none "$work/rb-none" "rspec" "$v"
fi
if have ruby; then
  v="$(ruby --version | cut -d' ' -f1-2), minitest"
  mk "$work/mt-pass/test/calc_test.rb" <<<'require "minitest/autorun"
class CalcTest < Minitest::Test
  def test_add = assert_equal(3, 1 + 2)
  def test_upcase = assert_equal("A", "a".upcase)
end'
  mk "$work/mt-fail/test/calc_test.rb" <<<'require "minitest/autorun"
class CalcTest < Minitest::Test
  def test_add = assert_equal(3, 1 + 2)
  def test_sub = assert_equal(3, 5 - 3)
end'
  mk "$work/mt-error/test/calc_test.rb" <<<'require "minitest/autorun"
class CalcTest < Minitest::Test
  def test_add = assert_equal(3, add(1, 2))
end'
  case_ minitest-pass pass "$work/mt-pass" "ruby -Itest test/calc_test.rb" "$v"
  case_ minitest-fail fail "$work/mt-fail" "ruby -Itest test/calc_test.rb" "$v"
  case_ minitest-error fail "$work/mt-error" "ruby -Itest test/calc_test.rb" "$v"
fi

# --- phpunit
if have phpunit; then
  v="$(phpunit --version | grep -o 'PHPUnit [0-9.]*')"
  mk "$work/php-pass/tests/CalcTest.php" <<<'<?php
use PHPUnit\Framework\TestCase;
final class CalcTest extends TestCase {
    public function testAdd(): void { $this->assertSame(3, 1 + 2); }
    public function testUpper(): void { $this->assertSame("A", strtoupper("a")); }
}'
  mk "$work/php-fail/tests/CalcTest.php" <<<'<?php
use PHPUnit\Framework\TestCase;
final class CalcTest extends TestCase {
    public function testAdd(): void { $this->assertSame(3, 1 + 2); }
    public function testSub(): void { $this->assertSame(3, 5 - 3); }
}'
  mk "$work/php-error/tests/CalcTest.php" <<<'<?php
use PHPUnit\Framework\TestCase;
final class CalcTest extends TestCase {
    public function testAdd(): void { $this->assertSame(3, add(1, 2)); }
}'
  mkdir -p "$work/php-none/tests"
  case_ phpunit-pass pass "$work/php-pass" "phpunit tests" "$v"
  case_ phpunit-fail fail "$work/php-fail" "phpunit tests" "$v"
  case_ phpunit-error fail "$work/php-error" "phpunit tests" "$v"
  case_ phpunit-no-tests none "$work/php-none" "phpunit tests" "$v"
fi

# --- ctest and make check
if have cmake && have ctest; then
  v="$(ctest --version | head -1)"
  for p in pass fail; do
    mk "$work/c-$p/CMakeLists.txt" <<<'cmake_minimum_required(VERSION 3.10)
project(calc C)
enable_testing()
add_executable(add_test add_test.c)
add_test(NAME adds COMMAND add_test 3)
add_test(NAME subtracts COMMAND add_test 1)'
    mk "$work/c-$p/add_test.c" <<<'#include <stdlib.h>
int main(int argc, char **argv) { return argc > 1 && atoi(argv[1]) == 3 ? 0 : 1; }'
  done
  sed -i 's/COMMAND add_test 1/COMMAND add_test 3/' "$work/c-pass/CMakeLists.txt"
  mk "$work/c-none/CMakeLists.txt" <<<'cmake_minimum_required(VERSION 3.10)
project(calc C)
enable_testing()'
  for p in pass fail none; do (cd "$work/c-$p" && cmake -S . -B build >/dev/null && cmake --build build >/dev/null); done
  case_ ctest-pass pass "$work/c-pass" "cd build && ctest" "$v"
  case_ ctest-fail fail "$work/c-fail" "cd build && ctest" "$v"
  case_ ctest-no-tests none "$work/c-none" "cd build && ctest" "$v"
fi
if have make; then
  v="$(make --version | head -1)"
  printf 'check:\n\t./run-tests.sh\n' | mk "$work/make-pass/Makefile"
  printf 'check:\n\t./run-tests.sh\n' | mk "$work/make-fail/Makefile"
  mk "$work/make-pass/run-tests.sh" <<<'#!/bin/sh
echo "PASS: adds"
echo "PASS: subtracts"
echo "# TOTAL: 2"
echo "# PASS:  2"
echo "# FAIL:  0"'
  mk "$work/make-fail/run-tests.sh" <<<'#!/bin/sh
echo "PASS: adds"
echo "FAIL: subtracts"
echo "# TOTAL: 2"
echo "# PASS:  1"
echo "# FAIL:  1"
exit 1'
  chmod +x "$work"/make-*/run-tests.sh
  case_ make-check-pass pass "$work/make-pass" "make check" "$v"
  case_ make-check-fail fail "$work/make-fail" "make check" "$v"
fi

cuts
