// Package keys stores AI provider API keys outside of plain files: in the OS keyring when
// there is one, otherwise in a real fallback that still keeps the key off disk or encrypted.
//
// # Which store
//
// Open picks the first store that works and Backend names it:
//
//  1. "os-keyring (…)" — zalando/go-keyring: Secret Service on Linux (GNOME Keyring,
//     KWallet, KeePassXC), Keychain on macOS, Credential Manager on Windows. It is probed
//     with a short timeout because a D-Bus call can hang when no Secret Service answers.
//  2. "encrypted file …" — when a passphrase is configured (MEMNODE_KEYS_PASSPHRASE, read by
//     cmd/) or the file already exists. keys.enc in the data dir holds one JSON map sealed
//     with AES-256-GCM under a key derived by scrypt (N=2^15, r=8, p=1) from the passphrase,
//     fresh salt and nonce on every write, written atomically with mode 0600. It survives
//     reboots; the price is a passphrase the node must be given at start.
//  3. "linux kernel keyring …" — the default headless fallback: the user's persistent
//     keyring (keyctl get_persistent, linked into @u), falling back to the user keyring.
//     The key lives only in kernel memory, never on disk, and every process of the same uid
//     (CLI and daemon) can read it, but no other user can. Trade-off, stated clearly to the
//     user: it does not survive a reboot, and the persistent keyring expires after
//     /proc/sys/kernel/keys/persistent_keyring_expiry (3 days by default) without use.
//
// Why the kernel keyring over the encrypted file as the default: it needs no passphrase
// (which on a headless box would itself end up in an env var or a file next to the
// ciphertext), and it is readable by the daemon without any prompt. Users who want keys to
// survive reboots on a headless machine opt into the encrypted file by setting a passphrase.
//
// Keys never appear in settings, logs or errors of this package: the logger only ever sees
// the provider name and the store name.
package keys
