import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The CLI tests' way of starting a process keeps its promises: a hung child is killed, a
/// child that ignores its input does not take the test process with it, and output is read
/// whole while input is still being written.
@Suite("ChildProcess: starting the tool as a shell would")
struct ChildProcessTests {
  let environment = ["PATH": "/usr/bin:/bin"]

  @Test("a hung child with nothing to read is killed at its timeout")
  func hungChildIsKilled() throws {
    let child = try ChildProcess(
      ["/bin/sleep", "30"], in: "/", environment: environment, stdout: .discard, stderr: .discard)
    let ending = child.finish(timeout: 0.2)
    #expect(ending.signaled && ending.status == SIGKILL)
  }

  @Test("a child that exits before reading its input leaves the test process running")
  func unreadInputIsDropped() throws {
    let child = try ChildProcess(
      ["/bin/sh", "-c", "exit 7"], in: "/", environment: environment,
      stdin: Data(repeating: 0x41, count: 1 << 20))
    let ending = child.finish()
    #expect(!ending.signaled && ending.status == 7)
  }

  @Test("a megabyte in and out at once, in its directory: nothing stalls, nothing is lost")
  func largeInputAndOutput() throws {
    let input = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) })
    let child = try ChildProcess(
      ["/bin/sh", "-c", "pwd >&2; cat"], in: "/tmp", environment: environment, stdin: input)
    let ending = child.finish()
    #expect(!ending.signaled && ending.status == 0)
    #expect(ending.stdout == input)
    let directory = URL(fileURLWithPath: "/tmp").resolvingSymlinksInPath().path
    #expect(String(decoding: ending.stderr, as: UTF8.self) == directory + "\n")
  }
}
