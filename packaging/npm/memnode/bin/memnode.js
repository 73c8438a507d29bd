#!/usr/bin/env node
// The `memnode` and `memnode-hook` commands of the npm package: run the prebuilt binary of
// this platform, from the @memnode/<os>-<cpu> package npm installed as an optional
// dependency (the esbuild pattern: npm skips the packages whose os/cpu do not match).
'use strict';
const { spawnSync } = require('child_process');
const path = require('path');

const platforms = {
  'linux x64': '@memnode/linux-x64',
  'linux arm64': '@memnode/linux-arm64',
  'darwin arm64': '@memnode/darwin-arm64',
  'darwin x64': '@memnode/darwin-x64',
};

function binary(name) {
  const pkg = platforms[`${process.platform} ${process.arch}`];
  if (!pkg) {
    throw new Error(`no prebuilt memnode for ${process.platform}/${process.arch}: build it from source (https://github.com/memnode/memnode#install)`);
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`${pkg} is not installed (npm skipped the optional dependency): npm install -g memnode --include=optional`);
  }
  return path.join(dir, 'bin', name);
}

module.exports = { binary };

if (require.main === module) {
  const name = path.basename(process.argv[1]).startsWith('memnode-hook') ? 'memnode-hook' : 'memnode';
  let bin;
  try {
    bin = binary(name);
  } catch (e) {
    process.stderr.write(`memnode: ${e.message}\n`);
    process.exit(1);
  }
  const r = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' });
  if (r.error) {
    process.stderr.write(`memnode: run ${bin}: ${r.error.message}\n`);
    process.exit(1);
  }
  process.exit(r.status === null ? 1 : r.status);
}
