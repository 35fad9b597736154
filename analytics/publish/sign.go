package publish

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"aead.dev/minisign"
)

// SigSuffix is what a signature file adds to the name of the file it signs
// (manifests/2026-11-01.json.minisig, catalog.json.minisig): minisign's format, so
// `minisign -Vm manifests/2026-11-01.json -p gpuprice.pub` checks one too.
const SigSuffix = ".minisig"

// PasswordEnv names the variable holding the password of an encrypted private key
// (one made by `minisign -G`); a key made by `gpuprice publish keygen` has none.
const PasswordEnv = "GPUPRICE_SIGN_PASSWORD"

// PrivateKey signs a publisher's manifests.
type PrivateKey = minisign.PrivateKey

// PublicKey checks them.
type PublicKey = minisign.PublicKey

// GenerateKey writes a new key pair: the private key (no password; mode 0600) to
// priv and the public key to pub. Neither may exist.
func GenerateKey(priv, pub string) (PublicKey, error) {
	pk, sk, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		return PublicKey{}, fmt.Errorf("keygen: %w", err)
	}
	skText, err := sk.MarshalText()
	if err != nil {
		return PublicKey{}, fmt.Errorf("keygen: %w", err)
	}
	pkText, err := pk.MarshalText()
	if err != nil {
		return PublicKey{}, fmt.Errorf("keygen: %w", err)
	}
	for _, f := range []struct {
		path string
		b    []byte
		mode os.FileMode
	}{{priv, skText, 0o600}, {pub, pkText, 0o644}} {
		w, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return PublicKey{}, fmt.Errorf("keygen: %w", err)
		}
		_, err = w.Write(append(f.b, '\n'))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return PublicKey{}, fmt.Errorf("keygen: %w", err)
		}
	}
	return pk, nil
}

// LoadPrivateKey reads a minisign private key; an encrypted one is decrypted with
// the password in $GPUPRICE_SIGN_PASSWORD.
func LoadPrivateKey(path string) (PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("--sign: %w", err)
	}
	var sk PrivateKey
	if minisign.IsEncrypted(b) {
		pw, ok := os.LookupEnv(PasswordEnv)
		if !ok {
			return sk, fmt.Errorf("--sign %s: the key is encrypted: set %s to its password", path, PasswordEnv)
		}
		if sk, err = minisign.DecryptKey(pw, b); err != nil {
			return sk, fmt.Errorf("--sign %s: %w (is %s right?)", path, err, PasswordEnv)
		}
		return sk, nil
	}
	if err := sk.UnmarshalText(b); err != nil {
		return sk, fmt.Errorf("--sign %s: %w", path, err)
	}
	return sk, nil
}

// LoadPublicKey reads a minisign public key: a file (as keygen or `minisign -G`
// write it) or the key's base64 text itself.
func LoadPublicKey(pathOrKey string) (PublicKey, error) {
	var pk PublicKey
	if err := pk.UnmarshalText([]byte(pathOrKey)); err == nil {
		return pk, nil
	}
	pk, err := minisign.PublicKeyFromFile(pathOrKey)
	if err != nil {
		return pk, fmt.Errorf("--key %s: %w", pathOrKey, err)
	}
	return pk, nil
}

// sign returns the minisign signature of b, whose trusted comment names what it is.
func sign(key *PrivateKey, b []byte, what string) []byte {
	return minisign.SignWithComments(*key, b, "gpuprice snapshot "+what, "signature from gpuprice publish")
}

// checkSig checks the signature of dir/rel (whose bytes are b) with key, and says
// what is wrong ("" when it holds).
func checkSig(dir, rel string, b []byte, key PublicKey) string {
	sig, err := readInside(dir, rel+SigSuffix, maxSigBytes)
	if errors.Is(err, os.ErrNotExist) {
		return "not signed (no " + rel + SigSuffix + "): publish with --sign"
	}
	if err != nil {
		return "signature: " + err.Error()
	}
	if !minisign.Verify(key, b, sig) {
		return "the signature " + rel + SigSuffix +
			" does not match the file with this key: it was changed or signed by another"
	}
	return ""
}
