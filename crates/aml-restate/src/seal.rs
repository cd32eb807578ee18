//! Authenticated encryption of journal entries with the secret a deployment's workers share
//! (docs/DURABLE.md, "Trust"). Anyone who reaches the ingress can call the journal object, so
//! the object cannot tell a worker's record from a forged one; the worker that loads can. An
//! entry is sealed with ChaCha20-Poly1305 under a key derived from the secret, and its
//! associated data binds it to the object, the workflow id, the run, the step key and the
//! request digest: an entry forged, edited, moved to another step or left by another run
//! fails to open and is never replayed. Sealing also keeps Agent answers unreadable to a
//! caller of the ingress who lacks the secret.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};

/// The shortest secret accepted, in characters (a base64 text of 24 random bytes).
pub const MIN_SECRET_CHARS: usize = 32;

/// Seals and opens entries under one deployment's secret.
pub struct Sealer {
    key: LessSafeKey,
    random: SystemRandom,
}

/// Where a sealed entry belongs: all of it is authenticated, none of it is encrypted.
pub struct Place<'a> {
    pub object: &'a str,
    pub workflow: &'a str,
    pub run: &'a str,
    pub key: &'a str,
    pub digest: &'a str,
}

impl Place<'_> {
    /// Each part length-prefixed, so no two places share an encoding.
    fn associated_data(&self) -> Vec<u8> {
        let parts = [self.object, self.workflow, self.run, self.key, self.digest];
        let mut data = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
        data.extend_from_slice(b"aml-journal-entry/1");
        for part in parts {
            data.extend_from_slice(&(part.len() as u64).to_be_bytes());
            data.extend_from_slice(part.as_bytes());
        }
        data
    }
}

impl Sealer {
    /// The sealer of `secret`; `Err` says why the secret is refused.
    pub fn new(secret: &str) -> Result<Sealer, String> {
        if secret.chars().count() < MIN_SECRET_CHARS {
            return Err(format!(
                "secret must be a string of at least {MIN_SECRET_CHARS} characters"
            ));
        }
        let salt = hkdf::Salt::new(hkdf::HKDF_SHA256, b"aml-jsx restate journal");
        let prk = salt.extract(secret.as_bytes());
        let okm = prk
            .expand(&[b"entry sealing key v1"], &CHACHA20_POLY1305)
            .map_err(|_| "secret could not derive a key".to_owned())?;
        Ok(Sealer {
            key: LessSafeKey::new(UnboundKey::from(okm)),
            random: SystemRandom::new(),
        })
    }

    /// `plaintext` sealed for `place`, as URL-safe base64 of nonce ‖ ciphertext ‖ tag.
    pub fn seal(&self, place: &Place<'_>, plaintext: &[u8]) -> Result<String, String> {
        let mut nonce = [0u8; NONCE_LEN];
        // A random 96-bit nonce per entry: a journal holds far fewer entries than would make
        // a repeat likely, and no counter has to survive a crashed worker.
        self.random
            .fill(&mut nonce)
            .map_err(|_| "no random nonce could be drawn".to_owned())?;
        let mut sealed = Vec::with_capacity(NONCE_LEN + plaintext.len() + 16);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(plaintext);
        let (head, body) = sealed.split_at_mut(NONCE_LEN);
        let tag = self
            .key
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(head.try_into().expect("nonce length")),
                Aad::from(place.associated_data()),
                body,
            )
            .map_err(|_| "the entry could not be sealed".to_owned())?;
        sealed.extend_from_slice(tag.as_ref());
        Ok(URL_SAFE_NO_PAD.encode(sealed))
    }

    /// The plaintext of `sealed` if it was sealed for `place` under this secret.
    pub fn open(&self, place: &Place<'_>, sealed: &str) -> Option<Vec<u8>> {
        let mut bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let mut body = bytes.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&bytes).ok()?;
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(place.associated_data()), &mut body)
            .ok()?;
        let length = plain.len();
        body.truncate(length);
        Some(body)
    }
}
