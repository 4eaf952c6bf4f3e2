import EntitlementCache
import Foundation

/// The server side of trusted snapshots (<doc:TrustedSnapshots>) for the trusted cases: the
/// test-vector keys of <doc:TrustedSnapshots> (``ResponseSigner``), so a response is signed as a
/// server signs it.
enum BenchSigner {
  /// 2027-01-01T00:00:00Z, after ``Workload/now``: the intermediate is valid throughout.
  static let server = ResponseSigner(
    rootPrivateKey: ResponseSigner.testRootKey,
    intermediatePrivateKey: ResponseSigner.testIntermediateKey, notAfter: 1_798_761_600_000)
  /// The nonce every request of the bench sent.
  static let nonce = (0..<16).map { UInt8($0) }

  /// The pinned root.
  static func roots() throws -> TrustRoots {
    guard let root = server.rootPublicKey else {
      throw BenchError.wrongAnswer("no public key for the test root")
    }
    return try TrustRoots(publicKeys: [root])
  }

  /// The intermediate's certificate, signed by the root.
  static func certificate() throws -> [UInt8] {
    guard let certificate = server.certificate() else {
      throw BenchError.wrongAnswer("the root cannot sign")
    }
    return certificate
  }

  /// The signed material for `body` as the server sends it for `scope`.
  static func sign(
    _ body: Data, requestDate: Date, for scope: CacheScope, certificate: [UInt8]
  ) throws -> ResponseSignature {
    guard
      let signed = server.sign(
        body, requestDate: requestDate, scopeHash: scope.key.bytes, nonce: nonce,
        certificate: certificate)
    else { throw BenchError.wrongAnswer("the intermediate cannot sign") }
    return signed
  }
}

/// A workload for a cache with trust roots: every scope holds the workload snapshot signed for
/// it, stored through such a cache, so each row carries its signed material and the writer's
/// `verified` verdict. ``Workload/create(in:scopes:entitlements:makeDirectory:)`` copies one
/// scope's rows for speed, which would leave every copy signed for the first scope.
struct TrustedWorkload {
  /// The file and its scopes; its ``Workload/snapshot`` is the unsigned body.
  let workload: Workload
  /// Each scope's signed snapshot, in ``Workload/scopes`` order.
  let snapshots: [CustomerInfoSnapshot]
  let configuration: CacheConfiguration

  static func create(
    in directory: String, scopes scopeCount: Int, entitlements entitlementCount: Int
  ) throws -> TrustedWorkload {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = "\(directory)/scopes-\(scopeCount)-entitlements-\(entitlementCount).sqlite"
    var configuration = Workload.configuration
    configuration.trustRoots = try BenchSigner.roots()
    let scopes = try (0..<scopeCount).map { index in
      try CacheScope(
        sdkKey: Workload.sdkKey, installationID: Workload.installation, environment: .production,
        appUserID: Workload.user(index))
    }
    let body = Data(SnapshotJSON.make(entitlements: entitlementCount).utf8)
    let unsigned = try CustomerInfoSnapshot(jsonData: body)
    let certificate = try BenchSigner.certificate()
    let snapshots = try scopes.map { scope in
      try CustomerInfoSnapshot(
        jsonData: body,
        signature: BenchSigner.sign(
          body, requestDate: unsigned.customerInfo.requestDate, for: scope,
          certificate: certificate),
        requestNonce: BenchSigner.nonce)
    }
    do {
      let cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: .fixed(Workload.now))
      for (scope, snapshot) in zip(scopes, snapshots) {
        try cache.store(snapshot, for: scope)
        guard cache.access(to: Workload.entitlement, for: scope).isVerifiedGrant else {
          throw BenchError.wrongAnswer("trusted workload: \(scope) is not a verified grant")
        }
      }
    }
    let workload = Workload(
      path: path, scopeCount: scopeCount, entitlementCount: entitlementCount, scopes: scopes,
      snapshot: unsigned)
    return TrustedWorkload(workload: workload, snapshots: snapshots, configuration: configuration)
  }
}

extension TrustedWorkload {
  /// One signature check as a verified read makes it, with everything but the verification
  /// itself done beforehand.
  struct SignatureCheck {
    var signature: [UInt8]
    /// ``ResponseVerifier/message(nonce:requestDate:scopeHash:body:)``: 118 bytes.
    var message: [UInt8]
    /// The intermediate's key, from its certificate.
    var key: [UInt8]

    @inline(__always)
    func verifies() -> Bool {
      Ed25519.isValidSignature(signature, of: message, publicKey: key)
    }
  }

  /// Each scope's signature check, in ``Workload/scopes`` order.
  func signatureChecks() throws -> [SignatureCheck] {
    try snapshots.map { snapshot in
      guard let signature = snapshot.signature else {
        throw BenchError.wrongAnswer("a trusted workload snapshot is unsigned")
      }
      return SignatureCheck(
        signature: signature.signature,
        message: ResponseVerifier.message(
          nonce: signature.nonce, requestDate: snapshot.customerInfo.requestDate,
          scopeHash: signature.scopeHash, body: snapshot.jsonData),
        key: Array(signature.intermediate.prefix(32)))
    }
  }
}

extension AccessDecision {
  /// Granted, on a snapshot the library itself found `verified`: what every operation of a
  /// trusted case must answer, so a failed check can never pass for a fast one.
  var isVerifiedGrant: Bool {
    isGranted && evidence.verification == .known(.verified)
      && evidence.verificationFailure == nil
  }
}
