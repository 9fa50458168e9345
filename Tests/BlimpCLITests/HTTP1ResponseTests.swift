@testable import BlimpCLI
import NIOCore
import Testing

/// How `blimp push` and `blimp simulate-devices` read the API's answers off the wire.
@Suite struct HTTP1ResponseTests {
    @Test func readsAnAnswerThatArrivesInPieces() throws {
        let answer = "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"
        var buffer = ByteBuffer()
        for byte in answer.utf8.dropLast() {
            buffer.writeInteger(byte)
            #expect(try HTTP1Response.read(from: &buffer) == nil)
        }
        buffer.writeString("}")
        let (status, body) = try #require(try HTTP1Response.read(from: &buffer))
        #expect(status == .created)
        #expect(String(buffer: body) == #"{"ok":true}"#)
        #expect(buffer.readableBytes == 0)
    }

    @Test func readsTwoAnswersInOneBufferOneAtATime() throws {
        var buffer = ByteBuffer(string: "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 400 Bad Request\r\nCONTENT-LENGTH: 2\r\n\r\n{}")
        #expect(try HTTP1Response.read(from: &buffer)?.status == .noContent)
        let second = try #require(try HTTP1Response.read(from: &buffer))
        #expect(second.status == .badRequest)
        #expect(String(buffer: second.body) == "{}")
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: twelve\r\n\r\n",
        "SSH-2.0-OpenSSH\r\n\r\n",
    ])
    func refusesWhatItCannotFrame(_ answer: String) {
        var buffer = ByteBuffer(string: answer)
        #expect(throws: HTTP1Response.MalformedResponse.self) { try HTTP1Response.read(from: &buffer) }
    }
}
