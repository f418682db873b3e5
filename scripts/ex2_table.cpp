// ex2_table GRID_NEG.d8 GRID_POS.d8 OUT: the measured ex2.approx.ftz.f32 on the
// 2^-23 grids of (-1, 0] (by magnitude q = i 2^-23) and [0, 1) (f = i 2^-23),
// i = 0 .. 2^23 - 1, written as the table the simulator reads: a header
// "EX2T" + count, then for each side the first result's bits and the int8
// differences of consecutive results' bits. The inputs are ex2dump's files
// (.dev/attn3/ex2dump.cu: results on the 2^-24 grids of [-1, 0] and [0, 1]).
// Build: g++ -O2 scripts/ex2_table.cpp -o ex2_table; then
// ./ex2_table grid_neg.d8 grid_pos.d8 t.bin && gzip -9 -n -c t.bin >
// simulator/data/ex2_approx_ftz_sm90.bin.gz
#include <cstdint>
#include <cstdio>
#include <vector>
static std::vector<uint32_t> decode(const char *path) {
  FILE *f = fopen(path, "rb");
  uint32_t first;
  fread(&first, 4, 1, f);
  std::vector<uint32_t> out{first};
  int c;
  while ((c = fgetc(f)) != EOF)
    out.push_back(out.back() + (uint32_t)(int32_t)(int8_t)c);
  fclose(f);
  return out;
}
int main(int argc, char **argv) {
  auto n = decode(argv[1]), p = decode(argv[2]);
  const uint32_t NQ = 1u << 23;
  FILE *o = fopen(argv[3], "wb");
  fwrite("EX2T", 1, 4, o);
  fwrite(&NQ, 4, 1, o);
  for (auto *v : {&n, &p}) {
    // pairs (2i, 2i + 1) of the 2^-24 grid are equal (the fraction is truncated to 23 bits)
    for (uint32_t i = 0; i < NQ; ++i)
      if ((*v)[2 * i] != (*v)[2 * i + 1]) {
        fprintf(stderr, "pair %u differs\n", i);
        return 1;
      }
    uint32_t first = (*v)[0];
    fwrite(&first, 4, 1, o);
    for (uint32_t i = 1; i < NQ; ++i) {
      long d = (long)(*v)[2 * i] - (long)(*v)[2 * i - 2];
      if (d < -128 || d > 127) {
        fprintf(stderr, "diff %ld at %u\n", d, i);
        return 1;
      }
      int8_t b = (int8_t)d;
      fwrite(&b, 1, 1, o);
    }
  }
  fclose(o);
}
