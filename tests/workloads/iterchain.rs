// iterchain [SECONDS] — a Rust program of the everyday kind: words counted in a HashMap with String
// keys, sorted by sort_unstable_by with a closure, digested with DefaultHasher and folded through
// a chain of iterator adapters. Built -O -g, the adapters' `Map::fold` is inlined into the
// `Map::fold` of the adapter around it: one function inlined into itself, several levels deep.
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

fn hash_phase(words: &[String], counts: &mut HashMap<String, u64>) {
    for w in words {
        *counts.entry(w.clone()).or_insert(0) += 1;
    }
}

fn sort_phase(v: &mut Vec<(String, u64)>) {
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

fn digest(v: &[(String, u64)]) -> u64 {
    let mut h = DefaultHasher::new();
    for (k, n) in v {
        k.hash(&mut h);
        n.hash(&mut h);
    }
    h.finish()
}

fn chained(v: &[(String, u64)]) -> u64 {
    v.iter()
        .map(|(k, n)| (k.len() as u64, *n))
        .map(|(l, n)| l.wrapping_mul(31).wrapping_add(n))
        .map(|x| x ^ (x >> 7))
        .filter(|x| x % 3 != 0)
        .map(|x| x.wrapping_mul(0x9e3779b97f4a7c15))
        .fold(0u64, |a, x| a.rotate_left(5) ^ x)
}

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let until = Instant::now() + Duration::from_secs(secs);
    let mut seed: u64 = 88172645463325252;
    let mut total = 0u64;
    while Instant::now() < until {
        let mut words = Vec::with_capacity(20000);
        for _ in 0..20000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            words.push(format!("w{}", seed % 5000));
        }
        let mut counts = HashMap::new();
        hash_phase(&words, &mut counts);
        let mut v: Vec<(String, u64)> = counts.into_iter().collect();
        sort_phase(&mut v);
        total = total.wrapping_add(digest(&v));
        // Often enough that the chain has samples in any run (once a round it had 0.2% of
        // them: a 3 s run could miss it); each over another slice, so none is hoisted.
        for i in 0..40 {
            total = total.wrapping_add(chained(&v[i % 7..]));
        }
    }
    println!("{}", total);
}
