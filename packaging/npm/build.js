#!/usr/bin/env node
// make npm: the npm packages of a release, as tarballs in dist/npm/, from the archives in
// dist/ (make dist; the darwin ones from the release workflow). Nothing is published: a
// maintainer runs `npm publish` on each tarball, the platform packages first.
//
// usage: node packaging/npm/build.js VERSION DIST_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const [version, distDir] = process.argv.slice(2);
if (!version || !distDir) {
  console.error('usage: build.js VERSION DIST_DIR');
  process.exit(2);
}
const here = __dirname;
const out = path.join(distDir, 'npm');
const repo = { type: 'git', url: 'git+https://github.com/memnode/memnode.git' };
const license = 'Apache-2.0';
const licenseFile = path.join(here, '..', '..', 'LICENSE');
// archive platform → npm package, os, cpu (Node's process.platform / process.arch).
const platforms = [
  ['linux_amd64', 'linux-x64', 'linux', 'x64'],
  ['linux_arm64', 'linux-arm64', 'linux', 'arm64'],
  ['darwin_arm64', 'darwin-arm64', 'darwin', 'arm64'],
  ['darwin_amd64', 'darwin-x64', 'darwin', 'x64'],
];

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

function pack(dir) {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', path.resolve(out)], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop();
  console.log(`== ${path.join(out, name)}`);
}

const built = [];
for (const [plat, suffix, os, cpu] of platforms) {
  const archive = path.join(distDir, `memnode_${version}_${plat}.tar.gz`);
  if (!fs.existsSync(archive)) {
    console.log(`-- no ${archive}: @memnode/${suffix} not built`);
    continue;
  }
  const dir = path.join(out, 'src', suffix);
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  execFileSync('tar', ['-xzf', archive, '-C', path.join(dir, 'bin'), 'memnode', 'memnoded', 'memnode-hook']);
  for (const b of ['memnode', 'memnoded', 'memnode-hook']) fs.chmodSync(path.join(dir, 'bin', b), 0o755);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
    name: `@memnode/${suffix}`,
    version,
    description: `memnode's prebuilt binaries for ${os}/${cpu} (installed by the memnode package)`,
    repository: repo,
    license,
    os: [os],
    cpu: [cpu],
    ...(os === 'linux' ? { libc: ['glibc'] } : {}),
    files: ['bin/'],
    preferUnplugged: true,
  }, null, 2) + '\n');
  fs.copyFileSync(licenseFile, path.join(dir, 'LICENSE'));
  fs.writeFileSync(path.join(dir, 'README.md'), `# @memnode/${suffix}\n\nThe \`memnode\`, \`memnoded\` (its daemon) and \`memnode-hook\` binaries for ${os}/${cpu}. Install \`memnode\`, not this package.\n`);
  pack(dir);
  built.push(suffix);
}
if (built.length === 0) {
  console.error(`no archives memnode_${version}_*.tar.gz in ${distDir}: run make dist first`);
  process.exit(1);
}

const main = path.join(out, 'src', 'memnode');
fs.mkdirSync(path.join(main, 'bin'), { recursive: true });
fs.copyFileSync(path.join(here, 'memnode', 'bin', 'memnode.js'), path.join(main, 'bin', 'memnode.js'));
fs.copyFileSync(path.join(here, 'memnode', 'README.md'), path.join(main, 'README.md'));
fs.copyFileSync(licenseFile, path.join(main, 'LICENSE'));
fs.chmodSync(path.join(main, 'bin', 'memnode.js'), 0o755);
fs.writeFileSync(path.join(main, 'package.json'), JSON.stringify({
  name: 'memnode',
  version,
  description: 'Persistent memory for AI coding agents, shared across your machines',
  repository: repo,
  license,
  bin: { memnode: 'bin/memnode.js', 'memnode-hook': 'bin/memnode.js' },
  files: ['bin/'],
  engines: { node: '>=18' },
  // Every platform, published or not in this build: npm installs the one matching os/cpu.
  optionalDependencies: Object.fromEntries(platforms.map(([, suffix]) => [`@memnode/${suffix}`, version])),
}, null, 2) + '\n');
pack(main);
fs.rmSync(path.join(out, 'src'), { recursive: true, force: true });
