//! The text of a sharding read: [`parse_sharding`], with each refusal at its offset.

use super::*;

/// Parses a sharding attribute value (`{devices=[2,2]<=[4]}`, `{{replicated}, {manual}}`, ...).
pub fn parse_sharding(text: &str) -> Result<Sharding> {
    let mut p = P { s: text, pos: 0 };
    let s = p.sharding()?;
    p.ws();
    if p.pos != text.len() {
        return p.err("unexpected text after the sharding".to_string());
    }
    Ok(s)
}

struct P<'a> {
    s: &'a str,
    pos: usize,
}

impl P<'_> {
    fn err<T>(&self, msg: String) -> Result<T> {
        self.err_at(self.pos, msg)
    }

    fn err_at<T>(&self, offset: usize, msg: String) -> Result<T> {
        Err(crate::error::ParseError {
            input: self.s.to_string(),
            offset,
            message: msg,
        }
        .into())
    }

    fn ws(&mut self) {
        while self.s[self.pos..].starts_with(' ') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.pos..].starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &str) -> Result<()> {
        if self.eat(t) {
            Ok(())
        } else {
            self.err(format!("expected {t:?}"))
        }
    }

    fn int(&mut self) -> Result<i64> {
        self.ws();
        let start = self.pos;
        let b = self.s.as_bytes();
        if self.pos < b.len() && b[self.pos] == b'-' {
            self.pos += 1;
        }
        while self.pos < b.len() && b[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let text = &self.s[start..self.pos];
        text.parse().or_else(|_| {
            self.pos = start;
            if text.bytes().any(|c| c.is_ascii_digit()) {
                self.err(format!("integer {text} is past XLA's signed 64-bit range"))
            } else {
                self.err("expected an integer".to_string())
            }
        })
    }

    fn ints(&mut self, close: &str) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(self.int()?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }

    /// ` metadata={...}` (balanced braces), verbatim.
    /// What may follow a sharding's body, verbatim and space-separated: a shard group (`shard_as N`,
    /// `shard_like N`) and `metadata={...}`, in either order, each at most once.
    fn metadata(&mut self) -> Result<Option<String>> {
        let mut parts: Vec<String> = Vec::new();
        let (mut group, mut meta) = (false, false);
        loop {
            self.ws();
            let at = self.pos;
            if let Some(kind) = ["shard_as", "shard_like"]
                .into_iter()
                .find(|k| self.s[self.pos..].starts_with(k))
            {
                if group {
                    return self.err_at(at, "a sharding has one shard group".to_string());
                }
                self.pos += kind.len();
                self.ws();
                let id = self.int()?;
                parts.push(format!("{kind} {id}"));
                group = true;
            } else if self.s[self.pos..].starts_with("metadata=") {
                if meta {
                    return self.err_at(at, "a sharding has one metadata={...}".to_string());
                }
                let m = self.metadata_braces()?;
                parts.push(format!("metadata={m}"));
                meta = true;
            } else {
                break;
            }
        }
        Ok((!parts.is_empty()).then(|| parts.join(" ")))
    }

    /// `metadata={...}`: the braces and what they hold.
    fn metadata_braces(&mut self) -> Result<String> {
        if !self.eat("metadata=") {
            return self.err("expected metadata=".to_string());
        }
        let start = self.pos;
        let mut depth = 0i32;
        let b = self.s.as_bytes();
        while self.pos < b.len() {
            match b[self.pos] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(self.s[start..self.pos].to_string());
                    }
                }
                b'"' => {
                    self.pos += 1;
                    while self.pos < b.len() && b[self.pos] != b'"' {
                        self.pos += if b[self.pos] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        self.err("unterminated metadata".to_string())
    }

    /// A sharding: a tuple of leaf shardings, or one leaf. Tuples do not nest (as in XLA, whose tuple
    /// shardings list one sharding per leaf of the flattened tuple shape).
    fn sharding(&mut self) -> Result<Sharding> {
        self.expect("{")?;
        self.ws();
        if self.s[self.pos..].starts_with('{') {
            let mut elems = vec![self.leaf()?];
            while self.eat(",") {
                elems.push(self.leaf()?);
            }
            self.expect("}")?;
            return Ok(Sharding::Tuple(elems));
        }
        self.leaf_body()
    }

    /// `{...}` holding one leaf sharding.
    fn leaf(&mut self) -> Result<Sharding> {
        self.expect("{")?;
        self.ws();
        if self.s[self.pos..].starts_with('{') {
            return self.err(
                "a tuple sharding lists one sharding per leaf; tuple shardings do not nest"
                    .to_string(),
            );
        }
        self.leaf_body()
    }

    /// A leaf sharding after its opening brace, through its closing brace.
    fn leaf_body(&mut self) -> Result<Sharding> {
        let s = if self.eat("replicated") {
            Sharding::Replicated {
                metadata: self.metadata()?,
            }
        } else if self.eat("manual") {
            Sharding::Manual {
                metadata: self.metadata()?,
            }
        } else if self.eat("unreduced") {
            Sharding::Unreduced {
                metadata: self.metadata()?,
            }
        } else if self.eat("unknown") {
            Sharding::Unknown {
                metadata: self.metadata()?,
            }
        } else if self.eat("maximal") {
            self.expect("device=")?;
            let device = self.int()?;
            Sharding::Maximal {
                device,
                metadata: self.metadata()?,
            }
        } else if self.eat("devices=[") {
            let at_devices = self.pos - "devices=[".len();
            let dims = self.ints("]")?;
            let tile_assignment = if self.eat("<=[") {
                let reshape = self.ints("]")?;
                self.ws();
                let at_t = self.pos;
                let transpose = if self.eat("T(") {
                    if reshape.len() <= 1 {
                        // XLA reads a transpose only after an iota of more than one dim.
                        return self.err_at(
                            at_t,
                            "a transpose T(...) needs an iota of more than one dim (XLA reads \
                             none after <=[N])"
                                .to_string(),
                        );
                    }
                    Some(self.ints(")")?)
                } else if reshape.len() > 1 {
                    // XLA reads `<=[a,b,…]` only with its transpose (`T(0,1,…)` for none).
                    return self.err_at(
                        at_t,
                        "expected T(...) after an iota of more than one dim: XLA reads <=[a,b,...] \
                         only with its transpose (T(0,1,...) for none)"
                            .to_string(),
                    );
                } else {
                    None
                };
                TileAssignment::Iota {
                    dims,
                    reshape,
                    transpose,
                }
            } else {
                let mut devices = vec![self.int()?];
                while self.eat(",") {
                    devices.push(self.int()?);
                }
                if devices.len() <= 1 {
                    return self.err_at(
                        at_devices,
                        "a tiled sharding over one device (XLA: non-maximal shardings must have \
                         more than one device assigned; write {maximal device=N} or {replicated})"
                            .to_string(),
                    );
                }
                TileAssignment::Explicit { dims, devices }
            };
            let last_tile_dim_replicate = self.eat("last_tile_dim_replicate");
            let mut last_tile_dims = Vec::new();
            if self.eat("last_tile_dims={") {
                loop {
                    self.ws();
                    let start = self.pos;
                    while self.s[self.pos..]
                        .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    {
                        self.pos += 1;
                    }
                    if start == self.pos {
                        return self
                            .err("expected a subgroup kind (manual, replicated, ...)".to_string());
                    }
                    last_tile_dims.push(self.s[start..self.pos].to_string());
                    if self.eat("}") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            Sharding::Tiled {
                tile_assignment,
                last_tile_dim_replicate,
                last_tile_dims,
                metadata: self.metadata()?,
            }
        } else {
            return self.err(
                "expected replicated, manual, maximal, unreduced, unknown or devices=".to_string(),
            );
        };
        self.expect("}")?;
        Ok(s)
    }
}
