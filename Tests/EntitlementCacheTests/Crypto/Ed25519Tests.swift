import TestSupport
import Testing

@testable import EntitlementCache

/// The Ed25519 side of the crypto facade (<doc:TrustedSnapshots>), checked against RFC 8032's test
/// vectors and against itself on generated keys and messages.
@Suite("Ed25519")
struct Ed25519Tests {
  /// The bytes of a hexadecimal string.
  static func bytes(_ hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var digits = hex.utf8.makeIterator()
    while let high = digits.next(), let low = digits.next() {
      result.append(value(high) << 4 | value(low))
    }
    return result
  }

  private static func value(_ digit: UInt8) -> UInt8 {
    digit >= UInt8(ascii: "a") ? digit - UInt8(ascii: "a") + 10 : digit - UInt8(ascii: "0")
  }

  /// RFC 8032 §7.1, TESTS 1–3: private key, public key, message, signature.
  static let vectors: [(String, String, String, String)] = [
    (
      "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
      "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    ),
    (
      "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
      "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
    ),
    (
      "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
      "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
      "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
    ),
  ]

  @Test("RFC 8032 vectors: the public key, the signature, and its check", arguments: vectors)
  func rfcVectors(_ vector: (String, String, String, String)) {
    let (privateKey, publicKey, message, signature) = (
      Self.bytes(vector.0), Self.bytes(vector.1), Self.bytes(vector.2), Self.bytes(vector.3)
    )
    #expect(Ed25519.publicKey(ofPrivateKey: privateKey) == publicKey)
    #expect(Ed25519.signature(of: message, privateKey: privateKey) == signature)
    #expect(Ed25519.isValidSignature(signature, of: message, publicKey: publicKey))
  }

  @Test("any changed bit of the signature, the message or the key fails the check")
  func changedBitsFail() throws {
    var generator = SplitMix64(seed: 25519)
    for round in 0..<60 {
      let privateKey = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let message = (0..<Int(generator.next() % 200)).map { _ in
        UInt8.random(in: 0...255, using: &generator)
      }
      let publicKey = try #require(Ed25519.publicKey(ofPrivateKey: privateKey))
      let signature = try #require(Ed25519.signature(of: message, privateKey: privateKey))
      #expect(Ed25519.isValidSignature(signature, of: message, publicKey: publicKey))
      var flipped = signature
      flipped[Int(generator.next() % 64)] ^= 1 << UInt8(generator.next() % 8)
      #expect(!Ed25519.isValidSignature(flipped, of: message, publicKey: publicKey), "\(round)")
      var other = message + [0]
      if !message.isEmpty {
        other = message
        other[Int(generator.next() % UInt64(message.count))] ^= 1
      }
      #expect(!Ed25519.isValidSignature(signature, of: other, publicKey: publicKey), "\(round)")
      var key = publicKey
      key[Int(generator.next() % 32)] ^= 1 << UInt8(generator.next() % 8)
      #expect(!Ed25519.isValidSignature(signature, of: message, publicKey: key), "\(round)")
    }
  }

  @Test("wrong lengths are answers, never traps")
  func wrongLengths() {
    let vector = Self.vectors[1]
    let (publicKey, message, signature) = (
      Self.bytes(vector.1), Self.bytes(vector.2), Self.bytes(vector.3)
    )
    #expect(
      !Ed25519.isValidSignature(Array(signature.dropLast()), of: message, publicKey: publicKey))
    #expect(!Ed25519.isValidSignature(signature + [0], of: message, publicKey: publicKey))
    #expect(
      !Ed25519.isValidSignature(signature, of: message, publicKey: Array(publicKey.prefix(31))))
    #expect(!Ed25519.isValidSignature([], of: message, publicKey: []))
    #expect(Ed25519.signature(of: message, privateKey: [1, 2, 3]) == nil)
    #expect(Ed25519.publicKey(ofPrivateKey: []) == nil)
  }
}
