import BlimpCore
import Foundation
import HTTPTypes
import Hummingbird

/// Reading request bodies and writing responses as Airship's API does.
enum AirshipJSON {
    /// The media type of every JSON answer under `/api`.
    static let contentType = "application/vnd.urbanairship+json; version=3"
    /// The `Link` header of a listing, pointing at its next page.
    static let link = HTTPField.Name("Link")!

    /// A JSON response.
    static func response(
        status: HTTPResponse.Status = .ok,
        headers: HTTPFields = [:],
        _ body: some Encodable
    ) throws -> Response {
        var fields = headers
        fields[.contentType] = Self.contentType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(data: try Self.encode(body))))
    }

    /// `body` as JSON, keys sorted.
    static func encode(_ body: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(body)
    }

    /// A response whose JSON is already written: the hottest answers skip the encoder.
    static func response(status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], json: String) -> Response {
        var fields = headers
        fields[.contentType] = Self.contentType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: json)))
    }

    /// `{"ok":true}`.
    static func ok() -> Response {
        Self.response(json: #"{"ok":true}"#)
    }

    /// The request body as JSON, read up to `limit` bytes; text that is not JSON is a 400 naming the line and column.
    static func json(from request: Request, upTo limit: Int) async throws -> RawJSON {
        var request = request
        let body = try await request.collectBody(upTo: limit)
        do {
            return try RawJSONParser.parse(body.readableBytesView)
        } catch {
            throw AirshipError.malformed(error)
        }
    }

    /// The request body decoded as `T`; malformed JSON or a field of the wrong type is a 400 naming the field.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: body))
        } catch let error as DecodingError {
            throw AirshipError.invalid(Self.field(for: error))
        }
    }

    /// The path and message of a decoding error: `channel.opt_in`, "expected a boolean".
    static func field(for error: DecodingError) -> InvalidField {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.reduce(into: "") { path, key in
                if let index = key.intValue {
                    path += "[\(index)]"
                } else {
                    path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            return InvalidField(path(context.codingPath), "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            return InvalidField(path(context.codingPath), "expected \(Self.describe(type)), not null")
        case .keyNotFound(let key, let context):
            return InvalidField(path(context.codingPath + [key]), "\(key.stringValue) is required")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return InvalidField("", "the body is not valid JSON")
        case .dataCorrupted(let context):
            return InvalidField(path(context.codingPath), context.debugDescription)
        @unknown default:
            return InvalidField("", "the body could not be read")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Bool.Type: "a boolean"
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        default: String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}
