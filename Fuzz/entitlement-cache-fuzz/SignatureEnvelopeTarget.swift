import EntitlementCache
import EntitlementCacheCLI

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `put --signature`'s envelope reader (`SignatureEnvelope.decode`) on the input. A rejection
/// is a usage error with a message; an envelope that decodes writes (`SignatureEnvelope.json`,
/// as `sign` writes it) to text that decodes back to an equal signature, and that text is
/// written again byte for byte.
enum SignatureEnvelopeTarget {
  static let scope = fixedScope(user: "fuzz-user")

  static func run(_ data: Data) {
    let signature: ResponseSignature
    do {
      signature = try SignatureEnvelope.decode(data, file: "fuzz.sig", storedUnder: scope)
    } catch {
      require(error.status == .usage, "an envelope failed with status \(error.status)")
      require(!error.message.isEmpty, "a rejected envelope's error has no message")
      return
    }
    let written = SignatureEnvelope.json(signature).rendered()
    do {
      let again = try SignatureEnvelope.decode(
        Data(written.utf8), file: "fuzz.sig", storedUnder: scope)
      require(again == signature, "the envelope written reads back as another signature")
      require(
        SignatureEnvelope.json(again).rendered() == written, "the envelope is written differently")
    } catch {
      require(false, "the envelope written does not read back: \(error.message)")
    }
  }
}
