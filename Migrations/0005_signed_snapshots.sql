-- Trusted snapshots (<doc:TrustedSnapshots>): the signed material kept with the snapshot, so every
-- read of the scope from disk can check the signature again and compare the normalized columns with
-- the body it covers.
--
-- Written by every store; NULL for a snapshot that came with no signature, and for every row
-- written before this migration, which a cache with trust roots therefore reads as
-- `failed(missing_signature)` until its next refresh.

-- The intermediate key's 64-byte signature over the response message.
ALTER TABLE scope ADD COLUMN response_signature BLOB;
-- The intermediate key's 104-byte certificate: key, notAfter, the root's signature.
ALTER TABLE scope ADD COLUMN response_intermediate BLOB;
-- The nonce the server signed (16 bytes, or empty), and the scope hash it signed.
ALTER TABLE scope ADD COLUMN response_nonce BLOB;
ALTER TABLE scope ADD COLUMN response_scope_hash BLOB;
-- The nonce the request sent; NULL when it sent none (nothing to compare).
ALTER TABLE scope ADD COLUMN request_nonce BLOB;

-- What the library decided when the snapshot arrived, with trust roots configured: the
-- trusted server time it checked the intermediate's expiry against (<doc:TimeModel>), and the
-- reason it failed (NULL when verified). trust_checked_at is NULL when the writer had no trust
-- roots: `verification` is then the body's own claim. A read with trust roots decides again from
-- the columns above and must reach the same verdict, or the row was edited: `failed(tampered)`.
ALTER TABLE scope ADD COLUMN trust_checked_at INTEGER;
ALTER TABLE scope ADD COLUMN verification_failure TEXT;
