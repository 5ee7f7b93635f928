import Crypto
import Foundation
import NIOCore
import _CryptoExtras

/// AES-256-GCM in the on-disk format of Parse Server's file adapters with an `encryptionKey` (the
/// `@parse/fs-files-adapter` and `GridFSBucketAdapter`): the key is the first 32 characters of the base64 of the
/// SHA-256 of the key string, each file is `ciphertext ‖ IV (16 random bytes) ‖ tag (16 bytes)`. A file written by
/// one is read by the other.
///
/// swift-crypto's GCM is one-shot, and a file must stream (1 GB uploads in flat memory), so the mode is put together
/// from BoringSSL's parts: the keystream is AES-CTR from GCM's counter block (`AES._CTR`), and GHASH of each
/// piece is taken from a GCM seal that authenticates the piece as associated data under a fixed nonce (so BoringSSL's
/// carry-less multiplication does the work); the pieces' hashes are chained with a few GF(2^128) products per piece.
/// The test checks the result against swift-crypto's own `AES.GCM.seal` with the 16-byte nonce.
struct FileCipher: Sendable {
    let key: SymmetricKey
    /// GHASH's key, E(K, 0¹²⁸).
    let h: GF128
    /// The fixed nonce of the GHASH helper seals, and its E(K, J0).
    let helperNonce: AES.GCM.Nonce
    let helperMask: GF128

    static let ivLength = 16
    static let tagLength = 16
    static let trailerLength = ivLength + tagLength

    /// - Parameter secret: `encryptionKey` as configured.
    init(secret: String) {
        let digest = SHA256.hash(data: Array(secret.utf8))
        let base64 = Data(digest).base64EncodedString()
        key = SymmetricKey(data: Array(base64.utf8.prefix(32)))
        h = Self.encryptBlock(GF128.zero, key: key)
        helperNonce = try! AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 12))
        // With nothing to authenticate GHASH is 0, so the tag is E(K, J0) itself.
        let empty = try! AES.GCM.seal([UInt8](), using: key, nonce: helperNonce)
        helperMask = GF128(bytes: Array(empty.tag))
    }

    /// E(K, block): one block of the AES-CTR keystream from that counter block.
    static func encryptBlock(_ block: GF128, key: SymmetricKey) -> GF128 {
        let out = try! AES._CTR.encrypt([UInt8](repeating: 0, count: 16), using: key, nonce: AES._CTR.Nonce(nonceBytes: block.bytes))
        return GF128(bytes: Array(out))
    }

    /// GHASH over `data`'s blocks (the last zero-padded) from a zero state, times H.
    func ghashTimesH(_ data: UnsafeRawBufferPointer) -> GF128 {
        let sealed = try! AES.GCM.seal([UInt8](), using: key, nonce: helperNonce, authenticating: data)
        let lengths = GF128(hi: UInt64(data.count) * 8, lo: 0)
        return GF128(bytes: Array(sealed.tag)) ^ helperMask ^ lengths.times(h)
    }

    /// The state of one file's encryption or decryption.
    func stream(iv: [UInt8]) -> GCMStream { GCMStream(cipher: self, iv: iv) }
}

/// GCM over one file: the keystream at any block (so a range decrypts without the bytes before it) and the running
/// GHASH of the ciphertext, absorbed in pieces whose lengths are multiples of 16 but for the last.
struct GCMStream {
    let cipher: FileCipher
    let j0: GF128
    /// E(K, J0): masks the tag.
    let mask: GF128
    /// The GHASH state so far, times H.
    var state = GF128.zero
    var length: Int64 = 0
    /// H^(blocks of the usual piece), cached.
    var powerCache: (blocks: Int, power: GF128)?

    init(cipher: FileCipher, iv: [UInt8]) {
        self.cipher = cipher
        // A 16-byte IV: J0 = GHASH(IV ‖ 0⁶⁴ ‖ [128]₆₄).
        let x = GF128(bytes: iv).times(cipher.h) ^ GF128(hi: 0, lo: UInt64(iv.count) * 8)
        j0 = x.times(cipher.h)
        mask = FileCipher.encryptBlock(j0, key: cipher.key)
    }

    /// XORs the keystream into `bytes`, whose first byte is at block `block` of the file. GCM increments only the
    /// counter block's low 32 bits, so a run that would carry into the upper 96 is split at the wrap.
    func crypt(_ bytes: UnsafeRawBufferPointer, fromBlock block: Int64, into out: inout ByteBuffer) {
        var offset = 0
        var counterLow = UInt32(truncatingIfNeeded: j0.lo) &+ 1 &+ UInt32(truncatingIfNeeded: block)
        while offset < bytes.count {
            let untilWrap = (UInt64(UInt32.max) - UInt64(counterLow) + 1) * 16
            let count = Int(min(UInt64(bytes.count - offset), untilWrap))
            let counter = GF128(hi: j0.hi, lo: (j0.lo & 0xFFFF_FFFF_0000_0000) | UInt64(counterLow))
            let nonce = try! AES._CTR.Nonce(nonceBytes: counter.bytes)
            let part = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
            let crypted = try! AES._CTR.encrypt(part, using: cipher.key, nonce: nonce)
            out.writeBytes(crypted)
            offset += count
            counterLow = 0
        }
    }

    /// Adds ciphertext to the hash; every piece but the last must be a multiple of 16 bytes long.
    mutating func absorb(_ ciphertext: UnsafeRawBufferPointer) {
        let blocks = (ciphertext.count + 15) / 16
        guard blocks > 0 else { return }
        let power: GF128
        if let cached = powerCache, cached.blocks == blocks {
            power = cached.power
        } else {
            power = cipher.h.power(blocks)
            powerCache = (blocks, power)
        }
        state = state.times(power) ^ cipher.ghashTimesH(ciphertext)
        length += Int64(ciphertext.count)
    }

    /// The tag of everything absorbed.
    var tag: [UInt8] {
        let lengths = GF128(hi: 0, lo: UInt64(length) * 8)
        return (mask ^ state ^ lengths.times(cipher.h)).bytes
    }
}

/// An element of GF(2^128) in GCM's bit order (the first byte's high bit is x⁰).
struct GF128: Equatable, Sendable {
    var hi: UInt64
    var lo: UInt64

    static let zero = GF128(hi: 0, lo: 0)
    static let one = GF128(hi: 1 << 63, lo: 0)

    init(hi: UInt64, lo: UInt64) {
        self.hi = hi
        self.lo = lo
    }

    /// From 16 big-endian bytes.
    init(bytes: [UInt8]) {
        var hi: UInt64 = 0
        var lo: UInt64 = 0
        for i in 0..<8 { hi = hi << 8 | UInt64(bytes[i]) }
        for i in 8..<16 { lo = lo << 8 | UInt64(bytes[i]) }
        self.init(hi: hi, lo: lo)
    }

    var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            out[i] = UInt8(truncatingIfNeeded: hi >> (56 - 8 * i))
            out[8 + i] = UInt8(truncatingIfNeeded: lo >> (56 - 8 * i))
        }
        return out
    }

    static func ^ (a: GF128, b: GF128) -> GF128 { GF128(hi: a.hi ^ b.hi, lo: a.lo ^ b.lo) }

    /// The product (NIST SP 800-38D, algorithm 1); a few per piece of a file, never per block.
    func times(_ y: GF128) -> GF128 {
        var z = GF128.zero
        var v = y
        for i in 0..<128 {
            let bit = i < 64 ? (hi >> UInt64(63 - i)) & 1 : (lo >> UInt64(127 - i)) & 1
            if bit == 1 {
                z.hi ^= v.hi
                z.lo ^= v.lo
            }
            let carry = v.lo & 1
            v.lo = (v.lo >> 1) | (v.hi << 63)
            v.hi >>= 1
            if carry == 1 { v.hi ^= 0xE100_0000_0000_0000 }
        }
        return z
    }

    func power(_ n: Int) -> GF128 {
        var result = GF128.one
        var base = self
        var n = n
        while n > 0 {
            if n & 1 == 1 { result = result.times(base) }
            base = base.times(base)
            n >>= 1
        }
        return result
    }
}
